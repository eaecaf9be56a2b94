//! `isadb classes` and `show`'s class: instructions of every ISA grouped by their
//! parameterized semantics (Hydride's similarity checking), built with the database.

mod common;

use common::{isadb, json, project_copy};
use serde_json::Value;

fn class_of(home: &std::path::Path, instruction: &str) -> Value {
    let out = isadb(home, &["--json", "show", instruction]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json(&out)["class"].clone()
}

/// The binding of `instruction` among `class`'s members, if it is one.
fn binding<'a>(class: &'a Value, instruction: &str) -> Option<&'a str> {
    class["members"]
        .as_array()?
        .iter()
        .find(|m| m["instruction"] == instruction)
        .and_then(|m| m["binding"].as_str())
}

#[test]
fn instructions_of_every_isa_share_a_class_up_to_sizes_and_signedness_where_z3_allows() {
    let guard = project_copy("classes");
    let home = guard.path();

    // Lane-wise add at every width and signedness, on all three ISAs: one class.
    let add = class_of(home, "_mm_add_epi16");
    assert_eq!(
        add["template"],
        "(add (var v0 <N0 x iW0>) (var v1 <N0 x iW0>))"
    );
    assert_eq!(add["isas"], serde_json::json!(["hvx", "neon", "x86"]));
    assert_eq!(binding(&add, "_mm_add_epi16"), Some("N0=8 W0=16 v0=a v1=b"));
    assert_eq!(binding(&add, "vaddq_u8"), Some("N0=16 W0=8 v0=a v1=b"));
    assert_eq!(
        binding(&add, "Q6_Vw_vadd_VwVw"),
        Some("N0=32 W0=32 v0=a v1=b")
    );

    // Signed and unsigned max are different operations.
    let smax = class_of(home, "vmaxq_s8");
    let umax = class_of(home, "vmaxq_u8");
    assert_ne!(smax["name"], umax["name"]);
    assert!(binding(&smax, "_mm_max_epi8").is_some(), "{smax}");
    assert!(binding(&umax, "_mm_max_epu8").is_some(), "{umax}");

    // pmaddwd and HVX's vrmpy: products of widened lanes summed in groups of C0.
    let madd = class_of(home, "_mm_madd_epi16");
    assert_eq!(
        binding(&madd, "Q6_Vw_vrmpy_VbVb"),
        Some("N0=32 C0=4 N1=128 W0=8 v0=a v1=b"),
        "{madd}"
    );
    assert_eq!(
        binding(&madd, "_mm_madd_epi16"),
        Some("N0=4 C0=2 N1=8 W0=16 v0=a v1=b")
    );

    // The listing: filtered by ISA and span, with the build's figures.
    let out = isadb(
        home,
        &["--json", "classes", "--isa", "hvx", "--spanning", "3"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let listing = json(&out);
    let classes = listing["classes"].as_array().unwrap();
    assert!(classes.iter().any(|c| c["name"] == add["name"]));
    assert!(classes
        .iter()
        .all(|c| c["isas"].as_array().unwrap().len() == 3));
    let summary = &listing["summary"];
    let stats = json(&isadb(home, &["--json", "db", "stats"]));
    let instructions: u64 = stats["isas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["instructions"].as_u64().unwrap())
        .sum();
    assert_eq!(summary["instructions"].as_u64(), Some(instructions));
    assert_eq!(summary["classes"], stats["classes"]);
    assert!(summary["classes"].as_u64().unwrap() < summary["instructions"].as_u64().unwrap());
    assert!(summary["spanning_3"].as_u64().unwrap() >= classes.len() as u64);

    // The equivalents query reads the classes, at the same parameters but for lane counts:
    // HVX's 16-bit add, not its 8-bit one.
    let out = isadb(
        home,
        &["query", "equivalents of _mm_add_epi16 on hvx", "--csv"],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Q6_Vh_vadd_VhVh"), "{text}");
    assert!(!text.contains("Q6_Vb_vadd_VbVb"), "{text}");
}
