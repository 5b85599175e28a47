//! The browser client: the files of `web/`, embedded in the binary at build
//! time, so running the server is all a user needs.
//!
//! Each file is served with a strong `ETag` (a hash of its bytes), answered
//! `304 Not Modified` when the browser already has it, and gzip-compressed
//! (once, at the first request) when the browser accepts gzip and
//! compressing saves space. The gzip form is another representation of the
//! file, so it has its own tag (the plain tag with `-gzip` before the
//! closing quote), and both answers say `Vary: accept-encoding`.
//!
//! The page (`index.html`, `no-cache`) names its files under a versioned
//! prefix, `/v/<version>/…`, where the version is a hash of every embedded
//! file: those answers may be kept for a year without asking again
//! (`immutable`), and the module imports inside them, being relative, stay
//! under the same prefix. A new binary with other files has another version,
//! so a page never mixes files of two builds. Every file is also served at
//! its plain path (`no-cache`), as before, and a page also without its
//! `.html` (`/admin`, the operators' page).

use std::collections::HashMap;
use std::io::Write;
use std::sync::OnceLock;

use axum::body::Body;
use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use include_dir::{Dir, include_dir};

use crate::validators::{etag_of, not_modified};

static WEB: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../../web");

/// The prefix of versioned file paths.
const VERSIONED: &str = "/v/";

/// How long a versioned file may be kept without asking again.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// An embedded file ready to serve.
struct Asset {
    bytes: axum::body::Bytes,
    mime: HeaderValue,
    /// Strong validator of the uncompressed bytes, quoted.
    etag: String,
    /// The gzip form, when it is smaller, and its own strong validator.
    gzip: Option<(Vec<u8>, String)>,
}

fn assets() -> &'static HashMap<&'static str, Asset> {
    static ASSETS: OnceLock<HashMap<&'static str, Asset>> = OnceLock::new();
    ASSETS.get_or_init(|| {
        let paths = files();
        paths
            .iter()
            .filter_map(|&path| {
                let raw = WEB.get_file(path)?.contents();
                let bytes = if path == "index.html" {
                    axum::body::Bytes::from(versioned_page(raw, &paths).into_bytes())
                } else {
                    axum::body::Bytes::from_static(raw)
                };
                let mime = mime_guess::from_path(path).first_or_octet_stream();
                let etag = etag_of(&bytes);
                let gzip = gzip(&bytes).filter(|z| z.len() + 64 < bytes.len()).map(|z| (z, gzip_etag(&etag)));
                Some((path, Asset { bytes, mime: HeaderValue::from_str(mime.as_ref()).ok()?, etag, gzip }))
            })
            .collect()
    })
}

/// The version of the embedded files: a hash of all of them.
pub fn version() -> &'static str {
    static VERSION: OnceLock<String> = OnceLock::new();
    VERSION.get_or_init(|| {
        let mut all = Vec::new();
        let mut paths = files();
        paths.sort_unstable();
        for path in paths {
            all.extend_from_slice(path.as_bytes());
            all.push(0);
            all.extend_from_slice(WEB.get_file(path).map_or(&[][..], |f| f.contents()));
        }
        etag_of(&all).trim_matches('"')[..12].to_owned()
    })
}

/// The page with each `"/<file>"` it names (an attribute such as
/// `href="/style.css"` or `src="/js/app.js"`) pointing at the file's
/// versioned path.
fn versioned_page(raw: &[u8], paths: &[&str]) -> String {
    let mut page = String::from_utf8_lossy(raw).into_owned();
    for path in paths.iter().filter(|p| **p != "index.html") {
        page = page.replace(&format!("\"/{path}\""), &format!("\"{VERSIONED}{}/{path}\"", version()));
    }
    page
}

/// The validator of a file's gzip form: its plain tag with `-gzip` inside
/// the quotes (another representation, another strong tag).
fn gzip_etag(etag: &str) -> String {
    format!("{}-gzip\"", etag.trim_end_matches('"'))
}

fn gzip(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(bytes).ok()?;
    enc.finish().ok()
}

/// `GET /`: the client's page.
pub async fn index(headers: HeaderMap) -> Response {
    file("index.html", &headers)
}

/// `GET /{*path}`: any other embedded file, or 404.
pub async fn asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    file(&path, &headers)
}

/// `GET /v/{version}/{*path}`: an embedded file under the current
/// version, to be kept for good; under another version (a page of an older
/// build), today's file, to be asked for again.
pub async fn versioned(Path((v, path)): Path<(String, String)>, headers: HeaderMap) -> Response {
    let mut resp = file(&path, &headers);
    if v == version() && resp.status() != StatusCode::NOT_FOUND {
        resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static(IMMUTABLE));
    }
    resp
}

/// True when the request's `Accept-Encoding` takes gzip.
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers.get_all(header::ACCEPT_ENCODING).iter().filter_map(|v| v.to_str().ok()).any(|v| {
        v.split(',').any(|part| {
            let mut it = part.trim().split(';');
            let coding = it.next().unwrap_or("").trim();
            let refused = it.any(|p| matches!(p.trim().strip_prefix("q="), Some(q) if q.trim().parse::<f32>().is_ok_and(|q| q == 0.0)));
            (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !refused
        })
    })
}

/// A page answered at its address without `.html` too: `/admin`, the
/// operators' page (the address `GET /api/v1/me` gives them).
fn page(path: &str) -> Option<&'static Asset> {
    if path.contains(['.', '/']) {
        return None;
    }
    assets().get(format!("{path}.html").as_str())
}

fn file(path: &str, request: &HeaderMap) -> Response {
    let Some(asset) = assets().get(path).or_else(|| page(path)) else {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    };
    // The representation chosen: its tag is the one the request may hold.
    let gzip = asset.gzip.as_ref().filter(|_| accepts_gzip(request));
    let etag = gzip.map_or(&asset.etag, |(_, tag)| tag);
    let mut resp = if not_modified(request, etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        match gzip {
            Some((z, _)) => Response::new(Body::from(z.clone())),
            None => Response::new(Body::from(asset.bytes.clone())),
        }
    };
    let ok = resp.status() == StatusCode::OK;
    let headers = resp.headers_mut();
    headers.insert(header::CONTENT_TYPE, asset.mime.clone());
    if let Ok(v) = HeaderValue::from_str(etag) {
        headers.insert(header::ETAG, v);
    }
    if gzip.is_some() && ok {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    if asset.gzip.is_some() {
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    // Files change with the binary: browsers revalidate each time, which
    // costs a 304 and no body when nothing changed.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    resp
}

/// Every embedded file's path (for tests).
pub fn files() -> Vec<&'static str> {
    fn walk(dir: &'static Dir<'static>, out: &mut Vec<&'static str>) {
        for f in dir.files() {
            if let Some(p) = f.path().to_str() {
                out.push(p);
            }
        }
        for d in dir.dirs() {
            walk(d, out);
        }
    }
    let mut out = Vec::new();
    walk(&WEB, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_is_embedded_and_served_with_types() {
        let files = files();
        assert!(files.contains(&"index.html"));
        assert!(files.iter().any(|f| f.ends_with(".js")));
        assert!(files.iter().any(|f| f.ends_with(".css")));
        let none = HeaderMap::new();
        let resp = file("index.html", &none);
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(resp.headers()[header::CONTENT_TYPE], "text/html");
        let css = files.iter().find(|f| f.ends_with(".css")).unwrap();
        assert_eq!(file(css, &none).headers()[header::CONTENT_TYPE], "text/css");
        assert_eq!(file("missing.txt", &none).status(), StatusCode::NOT_FOUND);
        // The operators' page, with and without `.html`.
        assert_eq!(file("admin", &none).headers()[header::CONTENT_TYPE], "text/html");
        assert_eq!(file("admin.html", &none).status(), StatusCode::OK);
        assert_eq!(file("admin/", &none).status(), StatusCode::NOT_FOUND);
        assert_eq!(file("../Cargo.toml", &none).status(), StatusCode::NOT_FOUND);
    }

    fn with(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(k.clone(), HeaderValue::from_str(v).unwrap());
        }
        h
    }

    async fn body(resp: Response) -> Vec<u8> {
        axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap().to_vec()
    }

    #[tokio::test]
    async fn files_are_gzipped_for_browsers_that_take_it_and_unchanged_otherwise() {
        let js = files().into_iter().find(|f| f.ends_with(".js")).unwrap();
        let raw = WEB.get_file(js).unwrap().contents();
        let plain = file(js, &HeaderMap::new());
        assert!(plain.headers().get(header::CONTENT_ENCODING).is_none());
        assert_eq!(body(plain).await, raw);
        let plain_tag = file(js, &HeaderMap::new()).headers()[header::ETAG].to_str().unwrap().to_owned();
        let zipped = file(js, &with(&[(header::ACCEPT_ENCODING, "gzip, deflate, br")]));
        assert_eq!(zipped.headers()[header::CONTENT_ENCODING], "gzip");
        assert_eq!(zipped.headers()[header::VARY], "accept-encoding");
        // Another representation, another strong tag.
        let zipped_tag = zipped.headers()[header::ETAG].to_str().unwrap().to_owned();
        assert_eq!(zipped_tag, format!("{}-gzip\"", plain_tag.trim_end_matches('"')));
        let z = body(zipped).await;
        assert!(z.len() < raw.len(), "{} >= {}", z.len(), raw.len());
        let mut unzipped = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&z[..]), &mut unzipped).unwrap();
        assert_eq!(unzipped, raw);
        // gzip refused with q=0: plain.
        let refused = file(js, &with(&[(header::ACCEPT_ENCODING, "gzip;q=0, br")]));
        assert!(refused.headers().get(header::CONTENT_ENCODING).is_none());
    }

    #[tokio::test]
    async fn a_browser_that_has_the_file_gets_304_without_a_body() {
        let first = file("index.html", &HeaderMap::new());
        let etag = first.headers()[header::ETAG].to_str().unwrap().to_owned();
        assert!(etag.starts_with('"') && etag.len() > 10);
        let again = file("index.html", &with(&[(header::IF_NONE_MATCH, &etag)]));
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(again.headers()[header::ETAG], etag.as_str());
        assert!(body(again).await.is_empty());
        // The gzip form's tag revalidates the gzip form, not the plain one.
        let gz = [(header::ACCEPT_ENCODING, "gzip")];
        let zipped = file("index.html", &with(&gz)).headers()[header::ETAG].to_str().unwrap().to_owned();
        assert_ne!(zipped, etag);
        let again = file("index.html", &with(&[gz[0].clone(), (header::IF_NONE_MATCH, &zipped)]));
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
        assert_eq!(again.headers()[header::ETAG], zipped.as_str());
        assert_eq!(again.headers()[header::VARY], "accept-encoding");
        assert!(again.headers().get(header::CONTENT_ENCODING).is_none());
        assert!(body(again).await.is_empty());
        assert_eq!(file("index.html", &with(&[(header::IF_NONE_MATCH, &zipped)])).status(), StatusCode::OK);
        assert_eq!(
            file("index.html", &with(&[gz[0].clone(), (header::IF_NONE_MATCH, &etag)])).status(),
            StatusCode::OK
        );
        // Another file's tag does not match.
        let css = files().into_iter().find(|f| f.ends_with(".css")).unwrap();
        assert_eq!(file(css, &with(&[(header::IF_NONE_MATCH, &etag)])).status(), StatusCode::OK);
        assert_eq!(file(css, &with(&[(header::IF_NONE_MATCH, "*")])).status(), StatusCode::NOT_MODIFIED);
    }
}
