//! What every backend stores the same way: vectors as bytes, and the metadata of a message
//! that arrived late.

use epimem_core::Timestamp;

use crate::StoreError;

/// A vector as little-endian `f32`s.
pub fn vector_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// A vector back from [`vector_bytes`].
pub fn vector_from_bytes(bytes: &[u8]) -> Result<Vec<f32>, StoreError> {
    if !bytes.len().is_multiple_of(4) {
        return Err(StoreError::Internal(format!("a stored vector has {} bytes", bytes.len())));
    }
    Ok(bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// `metadata` with `given_timestamp` set to the time a late message was sent with (it is
/// stored at its conversation's newest time: conversation time only moves forward).
pub fn with_given_time(metadata: &serde_json::Value, given: Timestamp) -> serde_json::Value {
    let mut out = match metadata {
        serde_json::Value::Object(map) => map.clone(),
        serde_json::Value::Null => serde_json::Map::new(),
        other => serde_json::Map::from_iter([("value".to_owned(), other.clone())]),
    };
    out.insert("given_timestamp".to_owned(), given.to_rfc3339().into());
    serde_json::Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_come_back_as_they_went_and_torn_bytes_are_refused() {
        let v = [0.5, -1.25, f32::MIN_POSITIVE, 3e9];
        assert_eq!(vector_from_bytes(&vector_bytes(&v)).unwrap(), v);
        assert!(vector_from_bytes(&[0, 1, 2]).is_err());
    }

    #[test]
    fn a_late_message_keeps_its_metadata_and_the_time_it_was_given() {
        let given = Timestamp(0);
        let kept = with_given_time(&serde_json::json!({"source": "chat"}), given);
        assert_eq!(kept["source"], "chat");
        assert_eq!(kept["given_timestamp"], "1970-01-01T00:00:00Z");
        assert_eq!(with_given_time(&serde_json::json!(7), given)["value"], 7);
    }
}
