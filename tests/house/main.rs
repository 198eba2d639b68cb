//! The house: no file of a crate imports a file that imports it back (issue 27's line, which
//! regressed once unseen). Reads the sources only; no server.

mod imports;

use std::path::Path;

use imports::{Circle, Crate};

/// Every crate of the workspace, by its source folder.
const CRATES: [&str; 4] = ["crates/stockguard-core/src", "crates/stockguard-engine/src", "src", "src-tauri/src"];

fn described(circles: &[Circle]) -> String {
    circles
        .iter()
        .map(|ties| {
            ties.iter()
                .map(|(from, to, words)| format!("  {} -> {}: {}", from.display(), to.display(), words.join(", ")))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect::<Vec<_>>()
        .join("\n circle:\n")
}

#[test]
fn no_file_of_any_crate_imports_a_file_that_imports_it_back() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found: Vec<String> = CRATES
        .iter()
        .filter_map(|src| {
            let circles = Crate::read(&root.join(src)).expect("the crate's sources are readable").circles();
            (!circles.is_empty()).then(|| format!("{src}:\n circle:\n{}", described(&circles)))
        })
        .collect();
    assert!(
        found.is_empty(),
        "files import each other in a loop (move the type or helper they share into a file of its own below \
         them):\n{}",
        found.join("\n")
    );
}

#[test]
fn two_siblings_that_name_each_other_are_a_circle_and_a_parent_with_its_child_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "pub mod a;\npub mod b;\npub mod c;\npub use c::Error;\n");
    write("a.rs", "use super::b::{self, B};\n// crate::c::d is named in a comment only\npub struct A;\n");
    write(
        "b.rs",
        "pub struct B(crate::a::A);\nconst WORDS: &str = \"super::c::d\";\n\
         const RAW: &str = r#\"a \"quoted\" crate::c::d\"#;\n/* crate::c::d, /* nested */ crate::c::d */\n\
         const LONG: char = '\"'; const 名: &str = \"名\";\n",
    );
    write("c/mod.rs", "pub mod d;\npub use self::d::Error;\n");
    // d names b: were a path in b's (or a's) comments and strings read, d would join the circle.
    write("c/d.rs", "use super::super::c as parent;\nuse crate::b::B;\npub struct Error;\n");

    let circles = Crate::read(dir.path()).unwrap().circles();

    assert_eq!(circles.len(), 1, "{}", described(&circles));
    let mut files: Vec<String> =
        circles[0].iter().map(|(from, _, _)| from.file_name().unwrap().to_string_lossy().into_owned()).collect();
    files.sort();
    assert_eq!(files, ["a.rs", "b.rs"]);
    let words: Vec<&String> = circles[0].iter().flat_map(|(_, _, words)| words).collect();
    assert!(words.iter().any(|w| *w == "B") && words.iter().any(|w| *w == "A"), "{words:?}");
}
