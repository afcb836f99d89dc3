//! Group commit of accepted pulls: the pulls that requests accept at about the same time
//! are written in one database transaction (each with its event and its work), so a burst
//! of requests costs one commit, not one each. A batch that fails is retried pull by pull,
//! so one bad row never fails the others.

use openrail_store::agentic::DebitPull;
use openrail_store::{Store, StoreError};
use tokio::sync::{mpsc, oneshot};

/// Most pulls written in one transaction.
const BATCH: usize = 256;

type Accept = (DebitPull, oneshot::Sender<Result<(), StoreError>>);

/// The writer of accepted pulls (one task per process).
#[derive(Debug, Clone)]
pub struct Intake {
    tx: mpsc::UnboundedSender<Accept>,
}

impl Intake {
    /// Starts the writer on `store` (inside a Tokio runtime).
    pub fn start(store: Store) -> Self {
        let (tx, mut rx) = mpsc::unbounded_channel::<Accept>();
        tokio::spawn(async move {
            while let Some(first) = rx.recv().await {
                let mut batch = vec![first];
                while batch.len() < BATCH {
                    match rx.try_recv() {
                        Ok(next) => batch.push(next),
                        Err(_) => break,
                    }
                }
                let pulls: Vec<DebitPull> = batch.iter().map(|(p, _)| p.clone()).collect();
                match store.insert_pulls(&pulls).await {
                    Ok(()) => {
                        for (_, reply) in batch {
                            let _ = reply.send(Ok(()));
                        }
                    }
                    Err(e) if batch.len() == 1 => {
                        let (_, reply) = batch.pop().expect("one");
                        let _ = reply.send(Err(e));
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, pulls = batch.len(), "writing a batch of pulls failed; writing them one by one");
                        for (p, reply) in batch {
                            let _ = reply.send(store.insert_pull(&p).await);
                        }
                    }
                }
            }
        });
        Self { tx }
    }

    /// Writes `pull` (with the others accepted meanwhile); returns once it is committed.
    pub async fn accept(&self, pull: DebitPull) -> Result<(), StoreError> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send((pull, reply))
            .map_err(|_| StoreError::Corrupt("the intake stopped".into()))?;
        answer
            .await
            .map_err(|_| StoreError::Corrupt("the intake stopped".into()))?
    }
}
