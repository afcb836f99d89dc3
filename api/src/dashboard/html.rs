//! HTML: escaping (every value that comes from a user, a row or a request goes through
//! [`esc`]) and the layout of every page. Styles and the dashboard's script are files under
//! `api/assets/dashboard`, embedded at build time.

use axum::http::{HeaderValue, header};
use axum::response::{Html, IntoResponse, Response};

const CSS: &str = include_str!("../../assets/dashboard/dashboard.css");
const JS: &str = include_str!("../../assets/dashboard/dashboard.js");

/// `s` safe inside HTML text and double-quoted attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `s` as one component of a URL query or path (RFC 3986 unreserved kept).
pub fn url_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Who is signed in, for the page header: their email, the session's CSRF token (the
/// sign-out form) and the section shown.
#[derive(Debug, Clone, Copy)]
pub struct Chrome<'a> {
    /// The signed-in person.
    pub email: &'a str,
    /// The session's CSRF token.
    pub csrf: &'a str,
    /// The path of the current section (`/dashboard`, `/dashboard/mandates`, …).
    pub current: &'a str,
}

/// The dashboard's sections, in the navigation's order.
pub const SECTIONS: &[(&str, &str)] = &[
    ("/dashboard", "API keys"),
    ("/dashboard/mandates", "Mandates"),
    ("/dashboard/session-keys", "Session keys"),
    ("/dashboard/pulls", "Pulls"),
    ("/dashboard/payments", "Payments"),
    ("/dashboard/bank-accounts", "Bank accounts"),
    ("/dashboard/identity", "Identity"),
    ("/dashboard/events", "Events"),
    ("/dashboard/webhooks", "Webhooks"),
    ("/dashboard/settings", "Settings"),
];

/// A whole page: `body` is already HTML (built with [`esc`]).
pub fn page(title: &str, chrome: Option<Chrome<'_>>, body: &str) -> Html<String> {
    let header = match chrome {
        Some(c) => {
            let mut nav = String::new();
            for (path, name) in SECTIONS {
                let current = if *path == c.current {
                    " aria-current=\"page\""
                } else {
                    ""
                };
                nav.push_str(&format!("<li><a href=\"{path}\"{current}>{name}</a></li>"));
            }
            format!(
                r#"<header class="top"><a class="brand" href="/dashboard">Openrail</a>
<div class="who"><span class="badge">Testnet</span><span>{email}</span>
<form class="inline" method="post" action="/logout">{csrf}<button type="submit">Sign out</button></form></div></header>
<nav class="sections" aria-label="Dashboard sections"><ul>{nav}</ul></nav>"#,
                email = esc(c.email),
                csrf = csrf_field(c.csrf),
            )
        }
        None => r#"<header class="top"><a class="brand" href="/dashboard">Openrail</a></header>"#
            .to_string(),
    };
    Html(format!(
        r##"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} · Openrail</title>
<link rel="stylesheet" href="/assets/dashboard.css">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
{header}
<main id="main">
{body}
</main>
<script src="/assets/dashboard.js" defer></script>
</body>
</html>
"##,
        title = esc(title),
    ))
}

/// The hidden CSRF field of a form.
pub fn csrf_field(token: &str) -> String {
    format!(
        "<input type=\"hidden\" name=\"csrf\" value=\"{}\">",
        esc(token)
    )
}

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut res = body.into_response();
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    res.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    res
}

/// `GET /assets/dashboard.css`
pub async fn css() -> Response {
    asset(CSS, "text/css; charset=utf-8")
}

/// `GET /assets/dashboard.js`
pub async fn js() -> Response {
    asset(JS, "text/javascript; charset=utf-8")
}

/// A script asset served with its content type (the consent page's).
pub fn script(body: &'static str) -> Response {
    asset(body, "text/javascript; charset=utf-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            esc(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
        assert_eq!(url_component("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
    }

    #[test]
    fn a_page_escapes_its_title_and_the_email() {
        let Html(p) = page(
            "<t>",
            Some(Chrome {
                email: "<a@b>",
                csrf: "\"x",
                current: "/dashboard",
            }),
            "",
        );
        assert!(p.contains("&lt;t&gt; · Openrail"));
        assert!(p.contains("&lt;a@b&gt;"));
        assert!(p.contains("value=\"&quot;x\""));
        assert!(!p.contains("<a@b>"));
    }
}
