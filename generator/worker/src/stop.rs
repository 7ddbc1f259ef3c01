//! Stopping on SIGINT or SIGTERM: [`Stop::install`] takes both signals
//! before a process does any work, so a signal at any instant of start-up,
//! serving or building asks for a graceful stop and never kills the
//! process with its builds mid-way. A second signal, for a stop that takes
//! too long, ends the process at once (exit status 130); its builds die
//! with it (their parent-death signal).

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
            tokio::select! {
                _ = term.recv() => {}
                _ = interrupt.recv() => {}
            }
            eprintln!("a second signal: stopping now");
            std::process::exit(130);
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

    /// `work`'s output, or `None` if a stop is asked for first (`work` is
    /// dropped: for start-up steps that may wait on a database or a store).
    pub async fn unless_asked<T>(&self, work: impl std::future::Future<Output = T>) -> Option<T> {
        tokio::select! {
            out = work => Some(out),
            () = self.clone().wait() => None,
        }
    }
}
