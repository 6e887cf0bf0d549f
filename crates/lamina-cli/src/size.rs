//! Byte counts as the command line writes them (`--memory-budget 512M`,
//! `--option cache_size=256M`, `--memory 64M`); the benchmark package
//! (`bench/`, `lamina-bench`) parses its sizes with the same function.

/// A byte count: `268435456`, `256M`, `256MiB`, `1G`, `64K` (binary units).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num.parse().map_err(|_| format!("not a size: {s}"))?;
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(format!("not a size: {s} (units: K, M, G, T)")),
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("size too large: {s}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("268435456"), Ok(268_435_456));
        assert_eq!(parse_size("256M"), Ok(256 << 20));
        assert_eq!(parse_size("1GiB"), Ok(1 << 30));
        assert_eq!(parse_size("64k"), Ok(64 << 10));
        assert!(parse_size("12Q").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("99999999999T").is_err());
    }
}
