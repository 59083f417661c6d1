//! The layering rule, checked on the source: in the root crate, SQL is sent
//! only from `src/store/` (the migration crate and the lower crates are
//! their own layers; ARCHITECTURE.md says why). A module elsewhere that
//! imports the ORM's query traits, calls a raw-statement method or holds a
//! SQL literal fails here, naming the file and line.

use std::path::{Path, PathBuf};

/// What sending SQL looks like in this code base: the ORM's query and
/// write traits (without them no `Entity::find`, `insert` or `delete` can
/// be called), the raw-statement calls, and statement literals.
const SQL_MARKS: &[&str] = &[
    "EntityTrait",
    "ActiveModelTrait",
    "QueryFilter",
    "QuerySelect",
    "QueryOrder",
    "TransactionTrait",
    "execute_raw",
    "execute_unprepared",
    "query_one_raw",
    "query_all_raw",
    "find_by_statement",
    "Statement::from",
    "sql::stmt",
    "\"SELECT ",
    "\"INSERT ",
    "\"UPDATE ",
    "\"DELETE FROM",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `file:line: mark` for every line of code (comments aside) with a mark.
fn sql_lines(files: &[PathBuf]) -> Vec<String> {
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("//") {
                continue;
            }
            if let Some(mark) = SQL_MARKS.iter().find(|m| code.contains(*m)) {
                found.push(format!("{}:{}: {mark}", file.display(), n + 1));
            }
        }
    }
    found
}

#[test]
fn sql_is_sent_only_from_the_store() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let store = src.join("store");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let (inside, outside): (Vec<PathBuf>, Vec<PathBuf>) = files.into_iter().partition(|f| f.starts_with(&store));
    // The scan recognises SQL where it is meant to be (so it can fail) …
    let in_store = sql_lines(&inside);
    assert!(in_store.len() > 20, "the scan finds the store's SQL: {in_store:?}");
    // … and finds none anywhere else.
    assert!(outside.len() > 20, "the scan reads the rest of src/: {outside:?}");
    let stray = sql_lines(&outside);
    assert!(stray.is_empty(), "SQL outside src/store/ (move it into the store):\n{}", stray.join("\n"));
}
