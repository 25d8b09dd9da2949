//! fio job files (INI: `[global]` and job sections) and fio-style command-line options.

use super::FioError;

/// One section of a job file: its name and its `key[=value]` lines in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub options: Vec<(String, Option<String>)>,
}

/// Parse a job file's text. As fio's parser does (`strip_blank_end`), a `;` or `#` anywhere
/// in a line starts a comment that runs to its end (`runtime=3600  # an hour`).
pub fn parse_jobfile(text: &str) -> Result<Vec<Section>, FioError> {
    let mut sections: Vec<Section> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split([';', '#']).next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with("include ") {
            return Err(FioError::new(format!(
                "line {}: 'include' of other job files is not supported yet",
                i + 1
            )));
        }
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest
                .strip_suffix(']')
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .ok_or_else(|| {
                    FioError::new(format!("line {}: bad section header '{line}'", i + 1))
                })?;
            sections.push(Section {
                name: name.to_string(),
                options: Vec::new(),
            });
            continue;
        }
        let section = sections.last_mut().ok_or_else(|| {
            FioError::new(format!(
                "line {}: option '{line}' outside of any [section]",
                i + 1
            ))
        })?;
        section.options.push(split_option(line));
    }
    Ok(sections)
}

fn split_option(s: &str) -> (String, Option<String>) {
    match s.split_once('=') {
        Some((k, v)) => (k.trim().to_string(), Some(v.trim().to_string())),
        None => (s.trim().to_string(), None),
    }
}

/// Keep only the job sections named by fio's `--section` (all when none is named); global
/// sections are always kept, as in fio.
pub fn select_sections(sections: Vec<Section>, names: &[String]) -> Vec<Section> {
    if names.is_empty() {
        return sections;
    }
    sections
        .into_iter()
        .filter(|s| s.name.starts_with("global") || names.contains(&s.name))
        .collect()
}

/// Turn `--opt=value` arguments into sections the way fio does: options before the first
/// `--name` go to `[global]`; each `--name=x` starts a job section.
pub fn parse_args(args: &[String]) -> Result<Vec<Section>, FioError> {
    let mut sections = vec![Section {
        name: "global".into(),
        options: Vec::new(),
    }];
    for a in args {
        let opt = a.strip_prefix("--").ok_or_else(|| {
            FioError::new(format!(
                "unexpected argument '{a}' (fio options are --name=value)"
            ))
        })?;
        let (k, v) = split_option(opt);
        if k == "name" {
            let name = v
                .clone()
                .filter(|n| !n.is_empty())
                .ok_or_else(|| FioError::new("--name needs a value"))?;
            sections.push(Section {
                name,
                options: Vec::new(),
            });
        } else {
            sections
                .last_mut()
                .expect("global exists")
                .options
                .push((k, v));
        }
    }
    Ok(sections)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_and_flags() {
        let s = parse_jobfile("; c\n[global]\nbs=4k\ntime_based\n\n[job1]\nrw = write\n# x\n")
            .expect("ok");
        assert_eq!(s.len(), 2);
        assert_eq!(
            s[0].options,
            vec![
                ("bs".into(), Some("4k".into())),
                ("time_based".into(), None)
            ]
        );
        assert_eq!(s[1].options, vec![("rw".into(), Some("write".into()))]);
        let s = parse_jobfile("[a]\nruntime=3600  # one hour\nbs=4k;x\n").expect("ok");
        assert_eq!(
            s[0].options,
            vec![
                ("runtime".into(), Some("3600".into())),
                ("bs".into(), Some("4k".into()))
            ]
        );
        let names = vec!["b".to_string()];
        let s = parse_jobfile("[global]\n[a]\n[b]\n").expect("ok");
        let kept: Vec<String> = select_sections(s, &names)
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(kept, vec!["global", "b"]);
        assert!(parse_jobfile("bs=4k\n")
            .expect_err("no section")
            .message
            .contains("line 1"));
        assert!(parse_jobfile("[oops\n").is_err());
    }

    #[test]
    fn args_follow_fio_rules() {
        let a: Vec<String> = ["--bs=8k", "--name=a", "--rw=read", "--name=b"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let s = parse_args(&a).expect("ok");
        assert_eq!(
            s.iter().map(|x| x.name.as_str()).collect::<Vec<_>>(),
            vec!["global", "a", "b"]
        );
        assert_eq!(s[0].options.len(), 1);
        assert!(parse_args(&["bs=4k".to_string()]).is_err());
    }
}
