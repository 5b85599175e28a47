//! REST errors: a status code and a JSON body with a stable code.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use spades_protocol::{ApiError, ErrorCode};

/// An error answered by a REST handler.
#[derive(Debug, Clone)]
pub struct AppError {
    /// Stable code.
    pub code: ErrorCode,
    /// Plain-English reason.
    pub message: String,
}

impl AppError {
    /// An error with a code and a reason.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> AppError {
        AppError { code, message: message.into() }
    }

    /// An internal failure; the detail is logged, not sent.
    pub fn internal(message: &str) -> AppError {
        AppError::new(ErrorCode::Internal, message)
    }

    /// The HTTP status for the code.
    pub fn status(&self) -> StatusCode {
        match self.code {
            ErrorCode::TableNotFound => StatusCode::NOT_FOUND,
            ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::Capacity
            | ErrorCode::ShuttingDown
            | ErrorCode::TableClosed
            | ErrorCode::StorageUnavailable => StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::InvalidToken => StatusCode::FORBIDDEN,
            _ => StatusCode::BAD_REQUEST,
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = self.status();
        (status, Json(ApiError { code: self.code, message: self.message })).into_response()
    }
}
