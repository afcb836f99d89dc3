//! A developer account and its API keys: their ids (`acct_…`, `key_…`). An account owns
//! every other object, each in one mode (test or live money); a key's secret is stored
//! only as its hash. Neither has a lifecycle here.

use crate::ids::typed_id;

typed_id!(
    /// A developer account (`acct_…`).
    AccountId = "acct_"
);
typed_id!(
    /// An account's API key (`key_…`; never its secret).
    ApiKeyId = "key_"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_and_api_key_ids_are_kinds_of_their_own() {
        let (a, k) = (AccountId::new(), ApiKeyId::new());
        assert!(a.as_str().starts_with("acct_") && a.as_str().len() == 5 + 24);
        assert!(k.as_str().starts_with("key_") && k.as_str().len() == 4 + 24);
        assert_eq!(AccountId::parse(a.as_str()), Some(a.clone()));
        assert_eq!(ApiKeyId::parse(k.as_str()), Some(k.clone()));
        assert_eq!(AccountId::parse(k.as_str()), None);
        assert_eq!(ApiKeyId::parse(a.as_str()), None);
        // `sk_…` is a session key, `sk_testnet_…` an API key's secret: neither is a key id.
        assert_eq!(ApiKeyId::parse("sk_testnet_abc"), None);
        assert_eq!(serde_json::to_string(&a).unwrap(), format!("\"{a}\""));
    }
}
