//! The API's errors: a status code and a stable `error` code, with a message for people.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    BadRequest(String),
    #[error("request body too large")]
    TooLarge,
    #[error("unknown product {0}")]
    UnknownProduct(u64),
    #[error("unknown order {0}")]
    UnknownOrder(String),
    #[error("sold out")]
    SoldOut,
    #[error("per-user limit reached")]
    LimitReached,
    #[error("the sale is not ready: stock is not loaded in Redis")]
    NotReady,
    #[error("order {0} is {1} and cannot be paid")]
    NotPayable(String, &'static str),
    #[error("order {0} is {1} and cannot be cancelled")]
    NotCancellable(String, String),
    #[error("too many requests; slow down")]
    RateLimited,
    #[error("sales are paused for a moment while stock is rebuilt; retry shortly")]
    Paused,
    #[error("temporarily unavailable")]
    Unavailable(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl ApiError {
    /// The stable error code clients branch on.
    pub fn code(&self) -> &'static str {
        self.parts().1
    }

    fn parts(&self) -> (StatusCode, &'static str) {
        match self {
            Self::BadRequest(_) => (StatusCode::BAD_REQUEST, "BAD_REQUEST"),
            Self::TooLarge => (StatusCode::PAYLOAD_TOO_LARGE, "TOO_LARGE"),
            Self::UnknownProduct(_) => (StatusCode::NOT_FOUND, "UNKNOWN_PRODUCT"),
            Self::UnknownOrder(_) => (StatusCode::NOT_FOUND, "UNKNOWN_ORDER"),
            Self::SoldOut => (StatusCode::CONFLICT, "SOLD_OUT"),
            Self::LimitReached => (StatusCode::CONFLICT, "LIMIT_REACHED"),
            Self::NotReady => (StatusCode::SERVICE_UNAVAILABLE, "NOT_READY"),
            Self::NotPayable(..) => (StatusCode::CONFLICT, "NOT_PAYABLE"),
            Self::NotCancellable(..) => (StatusCode::CONFLICT, "NOT_CANCELLABLE"),
            Self::RateLimited => (StatusCode::TOO_MANY_REQUESTS, "RATE_LIMITED"),
            Self::Paused => (StatusCode::SERVICE_UNAVAILABLE, "PAUSED"),
            Self::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "UNAVAILABLE"),
        }
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> Self {
        Self::Unavailable(Box::new(e))
    }
}

impl From<crate::engine::degraded::DbPathError> for ApiError {
    fn from(e: crate::engine::degraded::DbPathError) -> Self {
        match e {
            // The DB's switch says NORMAL (this instance's reading is behind, or its breaker
            // tripped before the escalation committed) or PAUSED (the guided exit): either
            // way the buyer should retry in a moment.
            crate::engine::degraded::DbPathError::NotDegraded(_) => Self::Paused,
            other => Self::Unavailable(Box::new(other)),
        }
    }
}

impl From<redis::RedisError> for ApiError {
    fn from(e: redis::RedisError) -> Self {
        Self::Unavailable(Box::new(e))
    }
}

impl From<crate::engine::vouched::VouchedError> for ApiError {
    fn from(e: crate::engine::vouched::VouchedError) -> Self {
        Self::Unavailable(Box::new(e))
    }
}

impl From<crate::engine::state::RedisCallError> for ApiError {
    fn from(e: crate::engine::state::RedisCallError) -> Self {
        Self::Unavailable(Box::new(e))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = self.parts();
        if let Self::Unavailable(source) = &self {
            // The cause goes to the log, never to the buyer.
            tracing::error!(error = %source, "request failed");
        }
        (status, Json(serde_json::json!({ "error": code, "message": self.to_string() }))).into_response()
    }
}
