//! JSON text written without serde_json's serializer: strings and numbers
//! as JS's `JSON.stringify` writes them. For what writes JSON inside Wasm
//! (outputs, problem documents, `#[derive(Value)]` types): serde_json's
//! float writer brings 17 KiB of tables, which every fresh instance of an
//! HTTP function then maps (measured in the contributor guide's
//! benchmarks).

use alloc::string::String;
use core::fmt::Write;

/// Appends `s` as a JSON string: `"` and `\` escaped, control characters
/// as `\n`, `\r`, `\t`, `\b`, `\f` or `\u00XX`, everything else as it is.
pub fn write_json_string(s: &str, out: &mut String) {
    out.push('"');
    let mut rest = s;
    while let Some(at) = rest.find(|c: char| c == '"' || c == '\\' || c < ' ') {
        out.push_str(&rest[..at]);
        let c = rest[at..].chars().next().unwrap_or_default();
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
        }
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
    out.push('"');
}

/// Appends `n` as a JSON number: a non-finite one `null`, zero (either
/// sign) `0`, a whole one without a fraction, and otherwise the fewest
/// digits that read back as `n` (core's formatting), with an exponent
/// below 1e-6 and from 1e21, as JS writes numbers. An `f32` is written as
/// the `f64` it is in JS (`0.1f32` as `0.10000000149011612`), so that the
/// HTTP function and a package's `JSON.stringify` write the same text.
pub fn write_json_float(n: f64, out: &mut String) {
    if !n.is_finite() {
        out.push_str("null");
    } else if n == 0.0 {
        out.push('0');
    } else if (1e-6..1e21).contains(&n.abs()) {
        let _ = write!(out, "{n}");
    } else {
        // core writes `1e21`; JS writes a positive exponent with its sign.
        let start = out.len();
        let _ = write!(out, "{n:e}");
        if let Some(e) = out[start..].find('e') {
            if !out[start + e + 1..].starts_with('-') {
                out.insert(start + e + 1, '+');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(s: &str) -> String {
        let mut out = String::new();
        write_json_string(s, &mut out);
        out
    }

    fn float(n: f64) -> String {
        let mut out = String::new();
        write_json_float(n, &mut out);
        out
    }

    #[test]
    fn strings_are_escaped_as_json_stringify_escapes_them() {
        assert_eq!(string("plain é ✓"), "\"plain é ✓\"");
        assert_eq!(string("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(string("\n\r\t\u{8}\u{c}\u{1}\u{1f}"), r#""\n\r\t\b\f\u0001\u001f""#);
        assert_eq!(string(""), "\"\"");
        // What serde_json reads back is the string written.
        for s in ["x\ny", "\u{0}", "\"\\", "tab\tend"] {
            assert_eq!(serde_json::from_str::<String>(&string(s)).unwrap(), s);
        }
    }

    #[test]
    fn numbers_are_written_as_js_writes_them() {
        for (n, text) in [
            (0.0, "0"),
            (-0.0, "0"),
            (3.0, "3"),
            (-2.5, "-2.5"),
            (0.1, "0.1"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (-2.5e300, "-2.5e+300"),
            (1.5e-7, "1.5e-7"),
            (0.000001, "0.000001"),
            (9007199254740993.0, "9007199254740992"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::NAN, "null"),
            (f64::NEG_INFINITY, "null"),
        ] {
            assert_eq!(float(n), text, "{n}");
            if n.is_finite() {
                assert_eq!(float(n).parse::<f64>().unwrap(), n, "{n} reads back");
            }
        }
        // An f32 as the f64 it is in JS, as JSON.stringify writes it.
        assert_eq!(float(f64::from(0.1f32)), "0.10000000149011612");
    }
}
