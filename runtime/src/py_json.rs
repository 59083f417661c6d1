//! JSON as Python's `json.dumps(value)` writes it: `", "` and `": "`
//! separators, ASCII escapes. Ironic's API bodies and oslo.upgradecheck's
//! `--json` are written that way, and clients compare them byte for byte,
//! so the REST server and the upgrade-check renderer both write through it.

/// Python's `json.dumps` layout (`", "` and `": "` separators, ensure_ascii)
/// for serde_json, so what Python tools compare byte for byte matches.
struct PythonFormatter;

impl serde_json::ser::Formatter for PythonFormatter {
    fn begin_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        if first { Ok(()) } else { w.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }

    /// serde_json escapes quotes, backslashes and control characters itself
    /// (as Python does); ensure_ascii also escapes DEL and everything above it.
    fn write_string_fragment<W: ?Sized + std::io::Write>(&mut self, w: &mut W, fragment: &str) -> std::io::Result<()> {
        for c in fragment.chars() {
            if (' '..='~').contains(&c) {
                w.write_all(&[c as u8])?;
            } else {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    write!(w, "\\u{unit:04x}")?;
                }
            }
        }
        Ok(())
    }
}

/// `value` as Python's `json.dumps(value)` writes it.
pub fn py_json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PythonFormatter);
    // Serializing plain data into a Vec cannot fail.
    value.serialize(&mut ser).expect("JSON serialization of plain data");
    String::from_utf8(out).expect("ensure_ascii output is ASCII")
}

#[cfg(test)]
mod tests {
    use super::py_json;

    #[test]
    fn writes_what_python_json_dumps_writes() {
        // Python: json.dumps({"a": [1, "é😀\x7f"], "b": None, "c": "q\"\\\n"})
        let value = serde_json::json!({"a": [1, "é😀\u{7f}"], "b": null, "c": "q\"\\\n"});
        assert_eq!(py_json(&value), r#"{"a": [1, "\u00e9\ud83d\ude00\u007f"], "b": null, "c": "q\"\\\n"}"#);
    }
}
