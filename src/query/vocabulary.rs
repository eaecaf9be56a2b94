//! The words of a question: idiom phrases and their aliases, ISA, feature and compile-target
//! names, instruction names (each with a "did you mean" when unknown), and the words around a
//! query form.

use crate::database::{several_spelled, Database};
use crate::error::{Error, Result};
use crate::spec::{Target, TARGETS};
use crate::words::{did_you_mean, edit_distance};
use rusqlite::OptionalExtension;

/// Normalises an idiom phrase: case, dashes and underscores do not matter.
fn norm(s: &str) -> String {
    s.to_lowercase()
        .replace(['-', '_'], " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Names and aliases the database knows, for resolution and suggestions.
pub struct Vocabulary<'a> {
    db: &'a Database,
    idioms: Vec<(String, String)>,
    targets: Vec<String>,
    /// Every instruction name and intrinsic, read only when a suggestion is needed.
    instructions: std::cell::OnceCell<Vec<String>>,
}

impl<'a> Vocabulary<'a> {
    pub fn load(db: &'a Database) -> Result<Vocabulary<'a>> {
        let mut idioms = Vec::new();
        for t in db.text_rows("SELECT name, aliases FROM idioms")? {
            idioms.push((norm(&t[0]), t[0].clone()));
            for a in t[1].split('|').filter(|a| !a.is_empty()) {
                idioms.push((norm(a), t[0].clone()));
            }
        }
        let column = |sql: &str| -> Result<Vec<String>> {
            Ok(db.text_rows(sql)?.into_iter().flatten().collect())
        };
        Ok(Vocabulary {
            db,
            idioms,
            // ISAs, features, and the compile targets that are neither (x86-avx2, x86-avx512).
            targets: column("SELECT name FROM isas UNION SELECT name FROM features")?
                .into_iter()
                .chain(compile_targets().map(|t| t.name.to_string()))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
            instructions: std::cell::OnceCell::new(),
        })
    }

    pub fn idioms(&self, phrase: &str) -> Result<Vec<String>> {
        let p = norm(phrase);
        let mut found: Vec<String> = self
            .idioms
            .iter()
            .filter(|(k, _)| *k == p)
            .map(|(_, n)| n.clone())
            .collect();
        found.sort();
        found.dedup();
        if found.is_empty() {
            return Err(Error::Usage(format!(
                "unknown idiom '{phrase}'{}",
                self.suggest(phrase)
            )));
        }
        Ok(found)
    }

    pub fn target(&self, t: &str) -> Result<String> {
        let lower = t.trim().to_lowercase();
        self.targets
            .iter()
            .find(|x| x.to_lowercase() == lower)
            .cloned()
            .ok_or_else(|| {
                let refs: Vec<&str> = self.targets.iter().map(String::as_str).collect();
                Error::Usage(format!(
                    "unknown ISA or feature '{t}'{} (known: {})",
                    did_you_mean(t, &refs),
                    self.targets.join(", ")
                ))
            })
    }

    pub fn instruction(&self, name: &str) -> Result<String> {
        let name = name.trim();
        let sql = "SELECT name FROM instructions WHERE name = ?1 OR intrinsic = ?1";
        let found: Option<String> = self
            .db
            .conn()
            .query_row(sql, [name], |r| r.get(0))
            .optional()?;
        if let Some(found) = found {
            return Ok(found);
        }
        match self.db.by_mnemonic(name)?.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(Error::Usage(format!(
                "unknown instruction '{name}'{}",
                self.suggest(name)
            ))),
            several => Err(several_spelled(name, several)),
        }
    }

    fn instruction_names(&self) -> &[String] {
        self.instructions.get_or_init(|| {
            let sql = "SELECT name FROM instructions UNION SELECT intrinsic FROM instructions WHERE intrinsic IS NOT NULL";
            self.db.text_rows(sql).map(|rows| rows.into_iter().flatten().collect()).unwrap_or_default()
        })
    }

    /// " (did you mean a, b or c?)" over idioms, aliases and instructions.
    pub fn suggest(&self, word: &str) -> String {
        let w = norm(word);
        let mut scored: Vec<(usize, &str)> = self
            .idioms
            .iter()
            .map(|(k, _)| k.as_str())
            .chain(self.instruction_names().iter().map(String::as_str))
            .map(|k| (edit_distance(&w, &norm(k)), k))
            .collect();
        scored.sort();
        scored.dedup_by(|a, b| a.1 == b.1);
        let best: Vec<String> = scored
            .iter()
            .take(3)
            .map(|(_, k)| format!("'{k}'"))
            .collect();
        if best.is_empty() {
            String::new()
        } else {
            format!(" (did you mean {}?)", best.join(", "))
        }
    }
}

/// The compile targets whose names are neither an ISA nor a feature: `on x86-avx2` means the
/// instructions of its features, as `compile --target x86-avx2` selects from.
pub fn compile_targets() -> impl Iterator<Item = &'static Target> {
    TARGETS
        .iter()
        .filter(|t| t.name != t.isa.as_str() && !t.features.contains(&t.name))
}

/// The features a compile target named `name` selects from (none for an ISA or a feature).
pub fn compile_target_features(name: Option<&str>) -> Vec<&'static str> {
    compile_targets()
        .find(|t| Some(t.name) == name)
        .map_or(vec![], |t| t.features.to_vec())
}

/// The question without the words around a query form: `which instructions implement X on
/// T?`, `what intrinsics compute X on T`, `list the instructions that perform X on T` are all
/// `X on T`. The words before the form are dropped only where they name instructions and a
/// verb follows (so `dot-product on hvx`, `instructions in neon` and `what implements E on T`
/// stay as they are).
pub fn plain(text: &str) -> &str {
    const LEADING: [&str; 10] = [
        "which", "what", "list", "show", "me", "all", "the", "are", "is", "find",
    ];
    const NOUNS: [&str; 6] = [
        "instruction",
        "instructions",
        "intrinsic",
        "intrinsics",
        "op",
        "ops",
    ];
    const LINKING: [&str; 21] = [
        "that",
        "which",
        "can",
        "could",
        "do",
        "does",
        "to",
        "for",
        "implement",
        "implements",
        "implementing",
        "compute",
        "computes",
        "computing",
        "perform",
        "performs",
        "performing",
        "give",
        "gives",
        "provide",
        "provides",
    ];
    let t = text.trim().trim_end_matches('?').trim_end();
    // Each word with the offset of the text after it.
    let mut words = Vec::new();
    let mut rest = t;
    while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
        let after = &rest[start..];
        let len = after.find(char::is_whitespace).unwrap_or(after.len());
        words.push(&after[..len]);
        rest = &after[len..];
        if rest.is_empty() {
            break;
        }
    }
    let is = |w: &str, set: &[&str]| set.iter().any(|x| x.eq_ignore_ascii_case(w));
    let mut k = 0;
    while k < words.len() && is(words[k], &LEADING) {
        k += 1;
    }
    if k >= words.len() || !is(words[k], &NOUNS) {
        return t;
    }
    k += 1;
    let noun = k;
    while k < words.len() && is(words[k], &LINKING) {
        k += 1;
    }
    // The noun asks only with a verb after it: `instructions in neon` is a form of its own.
    if k == noun {
        return t;
    }
    let Some(first) = words.get(k) else {
        return t;
    };
    // The offset of word `k` in `t`: words are subslices of it.
    let at = first.as_ptr() as usize - t.as_ptr() as usize;
    &t[at..]
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn question_words_around_a_query_form_are_dropped_only_where_they_name_instructions() {
        for q in [
            "which instructions implement dot-product on hvx?",
            "Which instruction implements dot-product on hvx",
            "what intrinsics compute dot-product on hvx",
            "list the instructions that perform dot-product on hvx",
            "instructions for dot-product on hvx",
            "show me all intrinsics which can do dot-product on hvx ?",
        ] {
            assert_eq!(plain(q), "dot-product on hvx", "{q}");
        }
        assert_eq!(plain("dot-product on hvx"), "dot-product on hvx");
        assert_eq!(
            plain("what implements x + y on neon"),
            "what implements x + y on neon"
        );
        assert_eq!(plain("which instructions"), "which instructions");
        assert_eq!(plain("instructions in neon"), "instructions in neon");
        assert_eq!(
            plain("list instructions in neon"),
            "list instructions in neon"
        );
        assert_eq!(plain("  "), "");
    }
}
