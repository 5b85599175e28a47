//! REST errors: a status code and a JSON body with a stable code.

use std::time::Duration;

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use spades_protocol::{ApiError, ErrorCode};

/// An error answered by a REST handler.
#[derive(Debug, Clone)]
pub struct AppError {
    /// Stable code.
    pub code: ErrorCode,
    /// Plain-English reason.
    pub message: String,
    /// The HTTP status when it is not the code's usual one.
    status: Option<StatusCode>,
    /// Seconds for a `Retry-After` header.
    retry_after: Option<u64>,
}

impl AppError {
    /// An error with a code and a reason.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> AppError {
        AppError { code, message: message.into(), status: None, retry_after: None }
    }

    /// `things` (accounts, passkeys…) could not be read or written: the
    /// store's failure is logged, the answer is `storage_unavailable` (503)
    /// to retry in a second.
    pub fn store_failed(things: &str, error: &dyn std::fmt::Display) -> AppError {
        tracing::warn!(store = things, %error, "a store failed");
        AppError::new(
            ErrorCode::StorageUnavailable,
            format!("{things} cannot be read or written right now: try again"),
        )
        .retry_after(Duration::from_secs(1))
    }

    /// An internal failure; the detail is logged, not sent.
    pub fn internal(message: &str) -> AppError {
        AppError::new(ErrorCode::Internal, message)
    }

    /// A `rate_limited` refusal (429) that may be retried after `wait`
    /// (sent as `Retry-After` in whole seconds, at least 1).
    pub fn rate_limited(message: impl Into<String>, wait: Duration) -> AppError {
        AppError::new(ErrorCode::RateLimited, message).retry_after(wait)
    }

    /// A request the current state refuses: `invalid_options`, 409.
    pub fn conflict(message: impl Into<String>) -> AppError {
        AppError::new(ErrorCode::InvalidOptions, message).with_status(StatusCode::CONFLICT)
    }

    /// Answers with `status` instead of the code's usual status.
    #[must_use]
    pub fn with_status(mut self, status: StatusCode) -> AppError {
        self.status = Some(status);
        self
    }

    /// Adds a `Retry-After` header of `wait`, rounded up to whole seconds
    /// (at least 1).
    #[must_use]
    pub fn retry_after(mut self, wait: Duration) -> AppError {
        let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        self.retry_after = Some(secs.max(1));
        self
    }

    /// The HTTP status for the code.
    pub fn status(&self) -> StatusCode {
        if let Some(status) = self.status {
            return status;
        }
        match self.code {
            ErrorCode::TableNotFound | ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::Capacity
            | ErrorCode::ShuttingDown
            | ErrorCode::TableClosed
            | ErrorCode::StorageUnavailable
            | ErrorCode::ProviderUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::InvalidToken => StatusCode::FORBIDDEN,
            ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
            ErrorCode::NameTaken | ErrorCode::LastSignIn => StatusCode::CONFLICT,
            ErrorCode::WrongPassword
            | ErrorCode::Suspended
            | ErrorCode::Banned
            | ErrorCode::Muted
            | ErrorCode::NotOperator => StatusCode::FORBIDDEN,
            _ => StatusCode::BAD_REQUEST,
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = self.status();
        let mut response =
            (status, Json(ApiError { code: self.code, message: self.message })).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(secs) = self.retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

/// The refusal of an extractor that never refuses (`()`), so that such an
/// extractor fits where an [`AppError`] refusal is expected.
impl From<std::convert::Infallible> for AppError {
    fn from(never: std::convert::Infallible) -> AppError {
        match never {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_retry_after() {
        let e = AppError::rate_limited("slow down", Duration::from_millis(1500));
        assert_eq!(e.status(), StatusCode::TOO_MANY_REQUESTS);
        let r = e.into_response();
        assert_eq!(r.headers()[header::RETRY_AFTER], "2");
        let r = AppError::rate_limited("slow down", Duration::ZERO).into_response();
        assert_eq!(r.headers()[header::RETRY_AFTER], "1");
        let e =
            AppError::new(ErrorCode::BadMessage, "json only").with_status(StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert_eq!(e.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert!(e.into_response().headers().get(header::RETRY_AFTER).is_none());
        assert_eq!(AppError::new(ErrorCode::Capacity, "full").status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(AppError::new(ErrorCode::NotFound, "no such path").status(), StatusCode::NOT_FOUND);
        assert_eq!(
            AppError::new(ErrorCode::MethodNotAllowed, "GET only").status(),
            StatusCode::METHOD_NOT_ALLOWED
        );
    }
}
