//! How the shell prints a datum: gdbmtool's escapes, and the locale's say
//! on non-ASCII characters.

/// Whether the locale's character set is UTF-8 (`LC_ALL`, else `LC_CTYPE`,
/// else `LANG`), which changes how gdbmtool prints non-ASCII bytes.
pub fn locale_is_utf8() -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .filter_map(std::env::var_os)
        .find(|v| !v.is_empty())
        .map(|v| {
            let v = v.to_string_lossy().to_ascii_lowercase();
            v.contains("utf-8") || v.contains("utf8")
        })
        .unwrap_or(false)
}

fn push_octal(b: u8, out: &mut Vec<u8>) {
    out.push(b'\\');
    out.push(b'0' + (b >> 6));
    out.push(b'0' + ((b >> 3) & 7));
    out.push(b'0' + (b & 7));
}

fn push_ascii(b: u8, out: &mut Vec<u8>) {
    match b {
        0x20..=0x7e => out.push(b),
        0x07 => out.extend_from_slice(b"\\a"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0c => out.extend_from_slice(b"\\f"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        0x0b => out.extend_from_slice(b"\\v"),
        _ => push_octal(b, out),
    }
}

/// Appends `datum` as gdbmtool prints a `string` datum: printable ASCII as
/// is, `\a \b \f \n \r \t \v` for those controls, `\ooo` (three octal
/// digits) for every other byte — except that in a UTF-8 locale (`utf8`)
/// a well-formed multibyte character that is not a control character is
/// printed as is, as gdbmtool does there.
pub fn format_datum(datum: &[u8], utf8: bool, out: &mut Vec<u8>) {
    if !utf8 || datum.is_ascii() {
        for &b in datum {
            push_ascii(b, out);
        }
        return;
    }
    for chunk in datum.utf8_chunks() {
        for c in chunk.valid().chars() {
            let mut buf = [0u8; 4];
            let bytes = c.encode_utf8(&mut buf).as_bytes();
            if c.is_ascii() {
                push_ascii(bytes.first().copied().unwrap_or(0), out);
            } else if c.is_control() {
                bytes.iter().for_each(|&b| push_octal(b, out));
            } else {
                out.extend_from_slice(bytes);
            }
        }
        chunk.invalid().iter().for_each(|&b| push_octal(b, out));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datum_format_matches_gdbmtool() {
        let mut out = Vec::new();
        format_datum(b"\x00\xff\x80 \x01\x02\x7f x\"y\\z\t\n", false, &mut out);
        assert_eq!(out, b"\\000\\377\\200 \\001\\002\\177 x\"y\\z\\t\\n");
        out.clear();
        format_datum(
            "\u{e9}t\u{e9}\u{a0}x\u{200b}y\u{85}".as_bytes(),
            false,
            &mut out,
        );
        assert_eq!(
            out,
            b"\\303\\251t\\303\\251\\302\\240x\\342\\200\\213y\\302\\205"
        );
        out.clear();
        let mut mixed = "\u{e9}t\u{e9}\u{a0}x\u{200b}y\u{85}\t".as_bytes().to_vec();
        mixed.extend_from_slice(b"\xff\xc3");
        format_datum(&mixed, true, &mut out);
        let mut want = "\u{e9}t\u{e9}\u{a0}x\u{200b}y".as_bytes().to_vec();
        want.extend_from_slice(b"\\302\\205\\t\\377\\303");
        assert_eq!(out, want);
    }
}
