//! z3 contexts: a proof's time depends on what its context saw before, so a selection's proof,
//! and within it the proof of a word of 64-bit lanes, runs in a context of its own.

/// `prove` run in a z3 context of its own: how long z3 takes depends on what its context saw
/// before (HVX's `mul_shr(x_i16, y_i16, 15)` proves in 5.5 s alone and took 72 s after the
/// corpus's other proofs on the same thread; AVX-512's `x_u32 % 7` 6 s alone and timed out).
///
/// The first proof on a thread takes the thread's own context (z3's `with_z3_config` would make
/// that one besides its fresh one, a second context costing as much as a small proof); it is
/// new unless the thread used z3 before, which in one `compile` only the search over the
/// target's moves may have. Later proofs take a fresh one each.
pub fn in_a_fresh_context<R>(prove: impl FnOnce() -> R) -> R {
    thread_local! {
        static FIRST_PROOF: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
    }
    if FIRST_PROOF.replace(false) {
        return prove();
    }
    /// The proof and its result, which hold `Rc`s and so are neither `Send` nor `Sync`.
    struct OnThisThread<T>(T);
    // SAFETY: `with_z3_config` runs the callback on the calling thread before it returns; its
    // bounds keep z3 objects of one context out of another, and none cross here: the proof
    // makes its z3 terms inside and returns isadb values.
    unsafe impl<T> Send for OnThisThread<T> {}
    unsafe impl<T> Sync for OnThisThread<T> {}
    let prove = OnThisThread(prove);
    let proven = z3::with_z3_config(&z3::Config::new(), move || {
        let prove = prove;
        /// Forgets the fresh context's count however the proof ends (a panic included).
        struct Forget;
        impl Drop for Forget {
            fn drop(&mut self) {
                super::budget::forget_this_context();
            }
        }
        let _forget = Forget;
        OnThisThread((prove.0)())
    });
    proven.0
}
