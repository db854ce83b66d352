//! Resolving an `href` against a base URL (RFC 3986 §5.2, enough for links).

/// Resolve `href` against the absolute `base`.
pub fn resolve(base: &str, href: &str) -> String {
    if href.is_empty() {
        return base.to_string();
    }
    if has_scheme(href) {
        return href.to_string();
    }
    let (scheme, rest) = match base.find(':') {
        Some(i) => (&base[..i], &base[i + 1..]),
        None => return href.to_string(),
    };
    if let Some(net) = href.strip_prefix("//") {
        return format!("{scheme}://{net}");
    }
    // Split the base into authority, path, query.
    let (authority, path_q) = match rest.strip_prefix("//") {
        Some(r) => match r.find(['/', '?', '#']) {
            Some(i) => (&r[..i], &r[i..]),
            None => (r, ""),
        },
        None => ("", rest),
    };
    let prefix = if rest.starts_with("//") { format!("{scheme}://{authority}") } else { format!("{scheme}:") };
    let path_q = path_q.split('#').next().unwrap_or("");
    let (base_path, base_query) = match path_q.find('?') {
        Some(i) => (&path_q[..i], &path_q[i..]),
        None => (path_q, ""),
    };
    if href.starts_with('#') {
        return format!("{prefix}{base_path}{base_query}{href}");
    }
    if href.starts_with('?') {
        return format!("{prefix}{base_path}{href}");
    }
    let (href_path, tail) = match href.find(['?', '#']) {
        Some(i) => (&href[..i], &href[i..]),
        None => (href, ""),
    };
    let merged = if href_path.starts_with('/') {
        href_path.to_string()
    } else {
        let dir = match base_path.rfind('/') {
            Some(i) => &base_path[..=i],
            None => "/",
        };
        format!("{dir}{href_path}")
    };
    format!("{prefix}{}{tail}", remove_dots(&merged))
}

fn has_scheme(s: &str) -> bool {
    match s.find(':') {
        Some(i) if i > 0 => {
            let scheme = &s[..i];
            scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        _ => false,
    }
}

fn remove_dots(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    let last = segments.len() - 1;
    for (i, seg) in segments.iter().enumerate() {
        match *seg {
            "." => {
                if i == last {
                    out.push("");
                }
            }
            ".." => {
                if out.len() > 1 {
                    out.pop();
                }
                if i == last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    let joined = out.join("/");
    if joined.starts_with('/') {
        joined
    } else {
        format!("/{joined}")
    }
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn resolves_like_a_browser() {
        let b = "http://h.test:8080/a/b/c.html?q=1#f";
        assert_eq!(resolve(b, "https://x.test/y"), "https://x.test/y");
        assert_eq!(resolve(b, "//cdn.test/z"), "http://cdn.test/z");
        assert_eq!(resolve(b, "/root"), "http://h.test:8080/root");
        assert_eq!(resolve(b, "d.html"), "http://h.test:8080/a/b/d.html");
        assert_eq!(resolve(b, "../up"), "http://h.test:8080/a/up");
        assert_eq!(resolve(b, "./"), "http://h.test:8080/a/b/");
        assert_eq!(resolve(b, "?x=2"), "http://h.test:8080/a/b/c.html?x=2");
        assert_eq!(resolve(b, "#top"), "http://h.test:8080/a/b/c.html?q=1#top");
        assert_eq!(resolve("http://h.test", "p"), "http://h.test/p");
        assert_eq!(resolve(b, "mailto:a@b.test"), "mailto:a@b.test");
    }
}
