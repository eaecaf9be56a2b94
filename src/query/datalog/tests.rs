//! Datalog: evaluation, unfolding, and errors that name the line.

use super::*;

#[test]
fn transitive_closure_and_inequality() {
    let p = Program::parse(
        "path(X, Y) :- edge(X, Y).\npath(X, Z) :- path(X, Y), edge(Y, Z).\nother(X, Y) :- path(X, Y), X != Y.",
        "t.dl",
    )
    .unwrap();
    let mut f = Facts::default();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")] {
        f.add("edge", &[a, b]);
    }
    p.run(&mut f);
    assert_eq!(f.tuples("path").len(), 12);
    assert!(f.tuples("other").iter().all(|t| t[0] != t[1]));
    assert_eq!(f.tuples("other").len(), 9);
}

#[test]
fn unfolding_keeps_the_answer() {
    let text = "reach(X, Y) :- edge(X, Y).\nreach(X, Z) :- reach(X, Y), edge(Y, Z).\n\
                pair(X, Y) :- edge(X, Z), edge(Z, Y), X != Y.\n\
                answer(Y) :- pair(\"a\", Y).\nanswer(Y) :- reach(\"c\", Y).";
    let p = Program::parse(text, "t.dl").unwrap();
    let mut full = Facts::default();
    let mut unfolded = Facts::default();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("b", "b")] {
        full.add("edge", &[a, b]);
        unfolded.add("edge", &[a, b]);
    }
    p.run(&mut full);
    p.unfold("answer").run(&mut unfolded);
    assert_eq!(full.tuples("answer"), unfolded.tuples("answer"));
    assert!(unfolded.tuples("pair").is_empty(), "pair was unfolded away");
    assert_eq!(full.tuples("answer").len(), 4);
}

#[test]
fn constants_filter() {
    let p = Program::parse("hvx(I) :- isa(I, \"hvx\").", "t.dl").unwrap();
    let mut f = Facts::default();
    f.add("isa", &["vrmpy", "hvx"]);
    f.add("isa", &["pmaddwd", "x86"]);
    p.run(&mut f);
    assert_eq!(f.tuples("hvx"), vec![vec!["vrmpy"]]);
}

#[test]
fn errors_name_the_line() {
    let err = Program::parse("a(X) :- b(X).\n\nc(Y) :- b(X).", "q.dl")
        .unwrap_err()
        .to_string();
    assert_eq!(err, "q.dl:3:1: head variable Y does not occur in the body");
}

#[test]
fn unknown_relations_and_arities_name_the_line() {
    let lib = Program::parse("reach(X, Y) :- edge(X, Y).", "lib.dl").unwrap();
    let check = |q: &str| {
        let q = Program::parse(q, "q.dl").unwrap();
        lib.clone()
            .then(q)
            .check(&[("edge", 2)])
            .map_err(|e| e.to_string())
    };
    assert_eq!(check("% x\nanswer(X) :- reach(X, Y)."), Ok(()));
    assert_eq!(
        check("% x\n\nanswer(X) :- raech(X, Y)."),
        Err("q.dl:3:1: unknown relation 'raech' (did you mean 'reach'?); relations: answer, edge, reach".into())
    );
    assert_eq!(
        check("answer(X) :- edge(X, Y, Z)."),
        Err("q.dl:1:1: relation 'edge' has 2 terms, used here with 3".into())
    );
}
