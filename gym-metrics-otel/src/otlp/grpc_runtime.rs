//! The runtime gRPC exports run on: a current-thread Tokio runtime driven by
//! a thread of the backend's own, so the application needs no runtime (and a
//! blocked application runtime cannot stall exports).

use std::io;
use std::time::Duration;

use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::metrics::data::ResourceMetrics;
use opentelemetry_sdk::metrics::exporter::PushMetricExporter;
use opentelemetry_sdk::metrics::Temporality;
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

/// Runs an exporter's exports on a [`GrpcRuntime`]. The runtime lives as long
/// as the exporter, so no export can outlive it.
#[derive(Debug)]
pub(crate) struct OnRuntime<E> {
    inner: E,
    runtime: GrpcRuntime,
}

impl<E> OnRuntime<E> {
    /// `inner` must have been built inside `runtime`'s context.
    pub(crate) fn new(inner: E, runtime: GrpcRuntime) -> Self {
        Self { inner, runtime }
    }
}

impl<E: PushMetricExporter> PushMetricExporter for OnRuntime<E> {
    async fn export(&self, metrics: &ResourceMetrics) -> OTelSdkResult {
        // Called on the SDK's reader thread, which is not inside any runtime,
        // so blocking on the handle is allowed; the runtime's own thread
        // drives IO and timers meanwhile.
        self.runtime.handle().block_on(self.inner.export(metrics))
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        let _entered = self.runtime.handle().enter();
        self.inner.shutdown_with_timeout(timeout)
    }

    fn temporality(&self) -> Temporality {
        self.inner.temporality()
    }
}
