//! What a payer is asked to sign for a mandate or a payment, and the signature once given
//! (the `authorizations` table).

use crate::db::StoreError;
use crate::exec::{Exec, Record, Stmt};

/// A requested (and perhaps given) authorization.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Authorization {
    /// `man_…` or `pay_…`.
    pub object_id: String,
    /// Who must sign (checksummed address).
    pub signer: String,
    /// The signer's nonce, decimal.
    pub nonce: String,
    /// Unix seconds; the signature is good until then.
    pub deadline: i64,
    /// 0x hex, once given.
    pub signature: Option<String>,
    /// Unix ms, once given.
    pub authorized_at: Option<i64>,
}

/// `Consent::get` on a connection (inside a transaction when recording an event).
pub(crate) async fn authorization_in(
    conn: &mut impl Exec,
    object_id: &str,
) -> Result<Option<Authorization>, StoreError> {
    let mut q = Stmt::new(
        conn.backend(),
        "SELECT object_id, signer, nonce, deadline, signature, authorized_at FROM authorizations \
         WHERE object_id = $1"
            .to_string(),
    );
    q.push(object_id);
    let rows = conn.fetch(&q).await?;
    rows.first()
        .map(|r| {
            Ok(Authorization {
                object_id: r.string("object_id")?,
                signer: r.string("signer")?,
                nonce: r.string("nonce")?,
                deadline: r.integer("deadline")?,
                signature: r.text("signature")?,
                authorized_at: r.int("authorized_at")?,
            })
        })
        .transpose()
}

/// Records what `a.signer` is asked to sign, inside the caller's transaction.
pub(crate) async fn insert_authorization_in(
    conn: &mut impl Exec,
    a: &Authorization,
) -> Result<(), StoreError> {
    let q = Stmt::new(
        conn.backend(),
        "INSERT INTO authorizations (object_id, signer, nonce, deadline, signature, authorized_at) \
         VALUES ($1, $2, $3, $4, $5, $6)"
            .into(),
    )
    .bind(&a.object_id)
    .bind(&a.signer)
    .bind(&a.nonce)
    .bind(a.deadline)
    .bind(&a.signature)
    .bind(a.authorized_at);
    conn.execute(&q).await?;
    Ok(())
}
