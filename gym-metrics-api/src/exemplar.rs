//! An exemplar: the trace and span a recorded value came from, so that a
//! slow bucket leads to the rollout that filled it.

/// The trace and span of a record, as W3C trace context gives them. A
/// backend that keeps exemplars captures one when a timer starts
/// ([`crate::backend::Recorder::exemplar`]); the ids are never zero.
///
/// ```
/// use gym_metrics_api::backend::Exemplar;
/// let e = Exemplar::new([0xab; 16], [0x01; 8]).expect("non-zero ids");
/// assert_eq!(e.trace_id_hex(), "ab".repeat(16));
/// assert_eq!(e.span_id_hex(), "01".repeat(8));
/// assert!(Exemplar::new([0; 16], [1; 8]).is_none());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Exemplar {
    trace_id: [u8; 16],
    span_id: [u8; 8],
}

impl Exemplar {
    /// The exemplar of this trace and span; `None` if either id is all
    /// zeros (W3C's invalid ids).
    ///
    /// ```
    /// assert!(gym_metrics_api::backend::Exemplar::new([1; 16], [0; 8]).is_none());
    /// ```
    pub fn new(trace_id: [u8; 16], span_id: [u8; 8]) -> Option<Self> {
        (trace_id != [0; 16] && span_id != [0; 8]).then_some(Self { trace_id, span_id })
    }

    /// The trace id's 16 bytes, as OTLP carries them.
    ///
    /// ```
    /// let e = gym_metrics_api::backend::Exemplar::new([7; 16], [1; 8]).unwrap();
    /// assert_eq!((e.trace_id(), e.span_id()), ([7; 16], [1; 8]));
    /// ```
    pub fn trace_id(&self) -> [u8; 16] {
        self.trace_id
    }

    /// The span id's 8 bytes, as OTLP carries them.
    ///
    /// ```
    /// let e = gym_metrics_api::backend::Exemplar::new([7; 16], [2; 8]).unwrap();
    /// assert_eq!(e.span_id(), [2; 8]);
    /// ```
    pub fn span_id(&self) -> [u8; 8] {
        self.span_id
    }

    /// The trace id as 32 lowercase hex digits, as `traceparent` and
    /// Prometheus' exemplar label `trace_id` write it.
    ///
    /// ```
    /// let e = gym_metrics_api::backend::Exemplar::new([0x0f; 16], [1; 8]).unwrap();
    /// assert!(e.trace_id_hex().starts_with("0f0f"));
    /// ```
    pub fn trace_id_hex(&self) -> String {
        hex(&self.trace_id)
    }

    /// The span id as 16 lowercase hex digits (label `span_id`).
    ///
    /// ```
    /// let e = gym_metrics_api::backend::Exemplar::new([1; 16], [0xa0; 8]).unwrap();
    /// assert_eq!(e.span_id_hex(), "a0".repeat(8));
    /// ```
    pub fn span_id_hex(&self) -> String {
        hex(&self.span_id)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
