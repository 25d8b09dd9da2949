//! The two text formats YCSB reads through Java: a `.properties` file as Java's
//! Properties.load reads it, and HistogramGenerator's field-length histogram file.

use super::properties::{FieldLengths, JAVA_INT_MAX};

/// Java's Properties.load: the (name, value) pairs of a properties text, in order. The error
/// is the line with a malformed `\\u` escape (Java throws there too).
pub fn java_properties(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(first) = lines.next() {
        let natural = first.trim_start_matches([' ', '\t', '\x0c']);
        if natural.is_empty() || natural.starts_with('#') || natural.starts_with('!') {
            continue;
        }
        // A line ending in an odd number of backslashes continues on the next one.
        let mut logical = String::from(natural);
        while logical.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1 {
            logical.pop();
            match lines.next() {
                Some(next) => logical.push_str(next.trim_start_matches([' ', '\t', '\x0c'])),
                None => break,
            }
        }
        let chars: Vec<char> = logical.chars().collect();
        let mut i = 0;
        let mut key = String::new();
        let unescape = |chars: &[char], i: &mut usize, out: &mut String| -> Result<(), String> {
            // chars[*i] is a backslash.
            *i += 1;
            let Some(&c) = chars.get(*i) else {
                return Ok(());
            };
            *i += 1;
            match c {
                't' => out.push('\t'),
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                'f' => out.push('\x0c'),
                'u' => {
                    let hex: String = chars.get(*i..*i + 4).unwrap_or(&[]).iter().collect();
                    let code = u32::from_str_radix(&hex, 16)
                        .ok()
                        .filter(|_| hex.len() == 4)
                        .ok_or_else(|| logical.clone())?;
                    out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                    *i += 4;
                }
                other => out.push(other),
            }
            Ok(())
        };
        while i < chars.len() {
            match chars[i] {
                '\\' => unescape(&chars, &mut i, &mut key)?,
                '=' | ':' | ' ' | '\t' | '\x0c' => break,
                c => {
                    key.push(c);
                    i += 1;
                }
            }
        }
        while i < chars.len() && matches!(chars[i], ' ' | '\t' | '\x0c') {
            i += 1;
        }
        if i < chars.len() && matches!(chars[i], '=' | ':') {
            i += 1;
        }
        while i < chars.len() && matches!(chars[i], ' ' | '\t' | '\x0c') {
            i += 1;
        }
        let mut value = String::new();
        while i < chars.len() {
            if chars[i] == '\\' {
                unescape(&chars, &mut i, &mut value)?;
            } else {
                value.push(chars[i]);
                i += 1;
            }
        }
        out.push((key, value));
    }
    Ok(out)
}

/// HistogramGenerator's file: `BlockSize<TAB>n`, then `i<TAB>count` for i = 0, 1, ...
pub(super) fn parse_histogram(text: &str) -> Result<FieldLengths, String> {
    let mut lines = text.lines();
    let first = lines.next().ok_or("Empty input file!")?;
    let mut f = first.split('\t');
    if f.next() != Some("BlockSize") {
        return Err("First line of histogram is not the BlockSize!".into());
    }
    let block: u64 = f
        .next()
        .and_then(|b| b.trim().parse().ok())
        .filter(|&b: &u64| b > 0 && b <= JAVA_INT_MAX)
        .ok_or("BlockSize is not a whole number from 1 to 2147483647")?;
    let mut buckets = Vec::new();
    for (i, line) in lines.enumerate() {
        let mut f = line.split('\t');
        let (Some(idx), Some(count)) = (f.next(), f.next()) else {
            return Err(format!("line {}: not bucket<TAB>count", i + 2));
        };
        if idx.trim().parse::<usize>().ok() != Some(i) {
            return Err(format!(
                "line {}: bucket {idx:?} out of order (expected {i})",
                i + 2
            ));
        }
        let c: u64 = count
            .trim()
            .parse()
            .ok()
            .filter(|&c: &u64| c <= JAVA_INT_MAX)
            .ok_or_else(|| format!("line {}: count {count:?} is not a Java int", i + 2))?;
        buckets.push(c);
        if buckets.len() > 1 << 20 {
            return Err("more than 1048576 buckets".into());
        }
    }
    let area: u64 = buckets.iter().sum();
    if area == 0 || area > JAVA_INT_MAX {
        return Err("the bucket counts must add up to 1 to 2147483647".into());
    }
    Ok(FieldLengths::Histogram { block, buckets })
}
