//! `/docs`: the API reference, rendered in the browser by Redoc from `/v1/openapi.json`.
//! Redoc's standalone bundle (npm `redoc`, pinned in `scripts/vendor-redoc.sh`) is
//! committed under `api/assets/redoc` and embedded in the binary: no CDN, no node at
//! build time. No authentication, like the document.

use axum::http::{HeaderValue, header};
use axum::response::{Html, IntoResponse, Response};

/// The bundle, embedded at build time.
const REDOC_JS: &[u8] = include_bytes!("../assets/redoc/redoc.standalone.js");

/// The policy of `/docs`: scripts only from this origin (Redoc's bundle and its start,
/// both files); styles also inline, because Redoc renders its styles into `<style>`
/// elements at run time; no framing, no `<base>`, forms only to this origin.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; \
     worker-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/// `GET /docs/init.js`: starts Redoc on the document (a file, not an inline script, so the
/// page's policy needs no `'unsafe-inline'` for scripts).
pub async fn init() -> Response {
    let mut res = r#"Redoc.init("/v1/openapi.json", { hideDownloadButton: false, expandResponses: "200,201" },
           document.getElementById("redoc"));
"#
    .into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/javascript; charset=utf-8"),
    );
    res
}

/// `GET /docs`: the reference page.
pub async fn page() -> Response {
    let mut res = page_html().into_response();
    let h = res.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    res
}

fn page_html() -> Html<&'static str> {
    Html(
        r#"<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Openrail API reference</title>
  <style>body { margin: 0; padding: 0; }</style>
</head>
<body>
  <div id="redoc"></div>
  <script src="/docs/redoc.standalone.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
"#,
    )
}

/// `GET /docs/redoc.standalone.js`: the vendored Redoc bundle.
pub async fn redoc() -> Response {
    let mut res = REDOC_JS.into_response();
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/javascript; charset=utf-8"),
    );
    res.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=86400"),
    );
    res
}
