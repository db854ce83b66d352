//! Resolving an `href` against a base URL the way the browser does (WHATWG URL
//! parsing, through the `url` crate, as the egress policy and `navigate` do), so a
//! descriptor's `href` is where a click on the link goes.

/// Resolve `href` against the absolute `base`; an `href` that cannot be resolved is
/// returned as written.
pub fn resolve(base: &str, href: &str) -> String {
    match url::Url::parse(base) {
        Ok(b) => b.join(href).map(String::from).unwrap_or_else(|_| href.to_string()),
        Err(_) => match url::Url::parse(href) {
            Ok(u) => u.into(),
            Err(_) => href.to_string(),
        },
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
        // WHATWG rules, as Chromium follows them: backslashes, tabs and newlines, dot segments.
        assert_eq!(resolve(b, "\\\\evil.test\\x"), "http://evil.test/x");
        assert_eq!(resolve(b, "/a/%2e%2e/b"), "http://h.test:8080/b");
        assert_eq!(resolve(b, "/p\tq\n"), "http://h.test:8080/pq");
        assert_eq!(resolve("http://H.TEST:80/", "x"), "http://h.test/x");
        assert_eq!(resolve("", "rel"), "rel");
    }
}
