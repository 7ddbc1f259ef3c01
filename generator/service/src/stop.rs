//! Stopping on SIGINT or SIGTERM: [`Stop::install`] takes both signals
//! before a process does any work, so a signal at any instant of start-up,
//! serving or building asks for a graceful stop and never kills the
//! process with its builds mid-way.

use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;

/// Whether SIGINT or SIGTERM has come since [`Stop::install`].
#[derive(Debug, Clone)]
pub struct Stop {
    asked: watch::Receiver<bool>,
}

impl Stop {
    /// Takes SIGINT and SIGTERM from now on (inside a Tokio runtime):
    /// from here, neither ends the process; each asks it to stop. Call it
    /// first, before anything that can take time.
    pub fn install() -> std::io::Result<Self> {
        let mut term = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        let (tell, asked) = watch::channel(false);
        tokio::spawn(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = interrupt.recv() => {}
            }
            let _ = tell.send(true);
            // Later signals find the handlers still installed: a stop
            // already under way finishes as it would have.
            let _keep = (term, interrupt);
            std::future::pending::<()>().await;
        });
        Ok(Self { asked })
    }

    /// A stop has been asked for.
    pub fn asked(&self) -> bool {
        *self.asked.borrow()
    }

    /// Resolves once a stop is asked for (at once if it already was).
    pub async fn wait(mut self) {
        let _ = self.asked.wait_for(|asked| *asked).await;
    }
}
