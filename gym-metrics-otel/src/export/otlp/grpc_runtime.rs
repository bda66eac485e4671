//! The runtime gRPC exports run on: a current-thread Tokio runtime driven by
//! a thread of the backend's own, so the application needs no runtime (and a
//! blocked application runtime cannot stall exports).

use std::io;

use tokio::runtime::Handle;
use tokio::sync::oneshot;

/// A runtime driven by its own thread until this value is dropped.
#[derive(Debug)]
pub(crate) struct GrpcRuntime {
    handle: Handle,
    stop: Option<oneshot::Sender<()>>,
}

impl GrpcRuntime {
    /// Starts the runtime and its thread.
    pub(crate) fn start() -> io::Result<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("gym-metrics-otel-grpc".into())
            .spawn(move || {
                // Runs (and so drives IO and timers) until the sender is
                // dropped; then the runtime is dropped on this thread.
                runtime.block_on(async {
                    let _ = stopped.await;
                });
            })?;
        Ok(Self {
            handle,
            stop: Some(stop),
        })
    }

    /// The handle to build and run gRPC clients with.
    pub(crate) fn handle(&self) -> &Handle {
        &self.handle
    }
}

impl Drop for GrpcRuntime {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
