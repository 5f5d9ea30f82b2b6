//! Codex app-server's JSON-RPC, as its WebSocket carries it: requests
//! `{"id","method","params"}`, replies `{"id","result"}` or
//! `{"id","error"}`, notifications `{"method","params"}` (no `"jsonrpc"`
//! field on 0.169.0). The server may also send requests of its own (an
//! approval to answer): the launcher never answers one, so a dialog is
//! never answered through this connection either.

use serde_json::{Value, json};

/// One message from the server.
#[derive(Clone, Debug, PartialEq)]
pub enum Incoming {
    /// The answer to the request with this id.
    Reply {
        id: u64,
        result: Result<Value, Value>,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// A request of the server's (never answered).
    Request {
        method: String,
    },
}

/// Reads one message; `None` for anything that is not one of the three.
pub fn classify(text: &str) -> Option<Incoming> {
    let message: Value = serde_json::from_str(text).ok()?;
    let method = message["method"].as_str().map(String::from);
    match (message.get("id"), method) {
        (Some(id), None) => {
            let id = id.as_u64()?;
            let result = match (message.get("result"), message.get("error")) {
                (Some(result), None) => Ok(result.clone()),
                (_, Some(error)) => Err(error.clone()),
                (None, None) => return None,
            };
            Some(Incoming::Reply { id, result })
        }
        (Some(_), Some(method)) => Some(Incoming::Request { method }),
        (None, Some(method)) => Some(Incoming::Notification {
            method,
            params: message["params"].clone(),
        }),
        (None, None) => None,
    }
}

/// A request line.
pub fn request(id: u64, method: &str, params: Value) -> String {
    json!({"id": id, "method": method, "params": params}).to_string()
}

/// A notification line (no params).
pub fn notification(method: &str) -> String {
    json!({ "method": method }).to_string()
}

/// What an error reply says, for people.
pub fn error_text(error: &Value) -> String {
    match error["message"].as_str() {
        Some(message) => format!("{} {message}", error["code"]),
        None => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_notifications_and_server_requests_are_told_apart() {
        assert_eq!(
            classify(r#"{"id":3,"result":{"deleted":true}}"#),
            Some(Incoming::Reply {
                id: 3,
                result: Ok(json!({"deleted": true}))
            })
        );
        let refused = r#"{"id":4,"error":{"code":-32600,"message":"thread/queue/add requires experimentalApi capability"}}"#;
        let Some(Incoming::Reply {
            result: Err(error), ..
        }) = classify(refused)
        else {
            panic!("an error reply");
        };
        assert_eq!(
            error_text(&error),
            "-32600 thread/queue/add requires experimentalApi capability"
        );
        assert_eq!(
            classify(r#"{"method":"thread/queue/changed","params":{"threadId":"t"}}"#),
            Some(Incoming::Notification {
                method: "thread/queue/changed".into(),
                params: json!({"threadId": "t"})
            })
        );
        assert_eq!(
            classify(r#"{"id":"s1","method":"item/commandExecution/requestApproval","params":{}}"#),
            Some(Incoming::Request {
                method: "item/commandExecution/requestApproval".into()
            })
        );
        for bad in ["", "[]", "{}", r#"{"id":1}"#, r#"{"id":"x","result":1}"#] {
            assert_eq!(classify(bad), None, "{bad}");
        }
    }
}
