//! Hand-written JSON output helpers. Strings are escaped like Jetstream's Go encoder does:
//! `"`, `\`, control characters, and the HTML-sensitive `<`, `>`, `&` (as \u003c, \u003e, \u0026),
//! plus U+2028/U+2029.

const fn escape_table() -> [u8; 256] {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = 1;
        i += 1;
    }
    t[b'"' as usize] = 1;
    t[b'\\' as usize] = 1;
    t[b'<' as usize] = 1;
    t[b'>' as usize] = 1;
    t[b'&' as usize] = 1;
    t[0xe2] = 1; // possible start of U+2028 / U+2029
    t
}

static ESC: [u8; 256] = escape_table();
const HEX: &[u8; 16] = b"0123456789abcdef";

/// Append `s` as a quoted JSON string.
#[inline]
pub fn str(buf: &mut Vec<u8>, s: &[u8]) {
    buf.push(b'"');
    str_body(buf, s);
    buf.push(b'"');
}

/// Append the escaped body of a JSON string (without quotes).
#[inline]
pub fn str_body(buf: &mut Vec<u8>, s: &[u8]) {
    let mut start = 0;
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if ESC[c as usize] == 0 {
            i += 1;
            continue;
        }
        if c == 0xe2 {
            if i + 2 < s.len() && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9) {
                buf.extend_from_slice(&s[start..i]);
                buf.extend_from_slice(if s[i + 2] == 0xa8 { b"\\u2028" } else { b"\\u2029" });
                i += 3;
                start = i;
            } else {
                i += 1;
            }
            continue;
        }
        buf.extend_from_slice(&s[start..i]);
        match c {
            b'"' => buf.extend_from_slice(b"\\\""),
            b'\\' => buf.extend_from_slice(b"\\\\"),
            b'\n' => buf.extend_from_slice(b"\\n"),
            b'\r' => buf.extend_from_slice(b"\\r"),
            b'\t' => buf.extend_from_slice(b"\\t"),
            _ => {
                buf.extend_from_slice(b"\\u00");
                buf.push(HEX[(c >> 4) as usize]);
                buf.push(HEX[(c & 15) as usize]);
            }
        }
        i += 1;
        start = i;
    }
    buf.extend_from_slice(&s[start..]);
}

#[inline(always)]
pub fn uint(buf: &mut Vec<u8>, v: u64) {
    let mut b = itoa::Buffer::new();
    buf.extend_from_slice(b.format(v).as_bytes());
}

#[cfg(test)]
mod tests {
    fn quoted(s: &[u8]) -> String {
        let mut b = Vec::new();
        super::str(&mut b, s);
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn escapes() {
        assert_eq!(
            quoted("a\"b\\c\nd<e>&f\u{1}g\u{2028}é😂".as_bytes()),
            "\"a\\\"b\\\\c\\nd\\u003ce\\u003e\\u0026f\\u0001g\\u2028é😂\""
        );
    }

    #[test]
    fn control_characters_use_the_short_forms_where_json_has_them() {
        assert_eq!(quoted(b"\n\r\t"), r#""\n\r\t""#);
        assert_eq!(quoted(b"\x00\x08\x0c\x1f"), r#""\u0000\u0008\u000c\u001f""#);
        assert_eq!(quoted(b"\x7f /"), "\"\x7f /\"");
    }

    #[test]
    fn line_and_paragraph_separators_only() {
        assert_eq!(quoted("\u{2028}\u{2029}".as_bytes()), r#""\u2028\u2029""#);
        // Other characters starting with 0xe2 pass as they are: € (e2 82 ac), ‧ (e2 80 a7).
        assert_eq!(quoted("€‧…".as_bytes()), "\"€‧…\"");
        // A truncated sequence at the end is copied as it is, never read past.
        for tail in [&b"\xe2"[..], b"\xe2\x80"] {
            let mut b = Vec::new();
            super::str(&mut b, &[b"x", tail].concat());
            assert_eq!(b, [&b"\"x"[..], tail, b"\""].concat());
        }
    }

    #[test]
    fn body_and_numbers() {
        let mut b = Vec::new();
        super::str_body(&mut b, b"");
        super::str_body(&mut b, b"plain");
        super::uint(&mut b, 0);
        super::uint(&mut b, u64::MAX);
        assert_eq!(b, b"plain018446744073709551615");
        assert_eq!(quoted(b""), "\"\"");
    }
}
