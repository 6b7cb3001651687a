//! The child side of `probe p2p` (`sm120-doctor __p2p-child`): the CUDA driver API through
//! cudarc (libcuda loaded at run time). It prints one [`ChildEvent`] per line, each flushed,
//! and a `step` line before every call that can block, so the parent can say where a hang is.
//!
//! Per GPU: the primary context, a stream, a source buffer holding a pseudo-random pattern and
//! a destination buffer. Per pair (a, b): `cuDeviceCanAccessPeer` both ways, peer access
//! enabled both ways, then for push a→b, push b→a, pull a→b, pull b→a: clear the destination,
//! one copy, read every byte back and compare, then the timed copies (CUDA events) and the
//! 8-byte latency copies; peer access is disabled again at the end of the pair.

use super::native::{check, describe, ok};
use super::p2p::{ChildEvent, GpuSelection, pairs_of};
use crate::snapshot::{P2pDevice, P2pDirection, P2pOutcome, Probed, ReasonCode};
use cudarc::driver::sys::{self, CUdeviceptr, CUresult};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::io::Write;
use std::time::Instant;

/// Arguments of the child.
#[derive(Debug, Clone)]
pub struct ChildArgs {
    pub gpus: GpuSelection,
    pub bytes: u64,
    pub iterations: u32,
}

const LATENCY_BYTES: usize = 8;
const LATENCY_RUNS: usize = 11;
/// Seed of the pattern.
const SEED: u64 = 0x9d2c_5680_1f0e_a1b3;

fn emit(ev: &ChildEvent) {
    let mut out = std::io::stdout().lock();
    let written = serde_json::to_writer(&mut out, ev)
        .map_err(std::io::Error::other)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    if written.is_err() {
        // The parent is gone: nobody is listening.
        std::process::exit(3);
    }
}

fn step(pair: Option<(u32, u32)>, s: impl Into<String>) {
    emit(&ChildEvent::Step {
        a: pair.map(|p| p.0),
        b: pair.map(|p| p.1),
        step: s.into(),
    });
}

/// splitmix64 bytes: a pattern in which no run of zeros or repeats hides a dropped write.
pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut out = vec![0u8; len];
    let mut x = seed;
    for chunk in out.chunks_mut(8) {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        let bytes = z.to_le_bytes();
        chunk.copy_from_slice(&bytes[..chunk.len()]);
    }
    out
}

/// Compare every byte: `Ok` or the count of differing bytes and the first of them.
pub fn verify(expected: &[u8], got: &[u8]) -> P2pOutcome {
    if expected == got {
        return P2pOutcome::Ok;
    }
    let mut first = None;
    let mut count: u64 = 0;
    for (i, (e, g)) in expected.iter().zip(got).enumerate() {
        if e != g {
            count += 1;
            if first.is_none() {
                first = Some((i, *e, *g));
            }
        }
    }
    count += expected.len().abs_diff(got.len()) as u64;
    let (off, e, g) = first.unwrap_or((expected.len().min(got.len()), 0, 0));
    P2pOutcome::WrongData {
        mismatched_bytes: count,
        first_offset: off as u64,
        expected: e,
        got: g,
    }
}

/// One GPU's resources.
struct Dev {
    index: u32,
    dev: sys::CUdevice,
    ctx: sys::CUcontext,
    stream: sys::CUstream,
    src: CUdeviceptr,
    dst: CUdeviceptr,
    ev0: sys::CUevent,
    ev1: sys::CUevent,
    info: P2pDevice,
}

// SAFETY: the handles are plain driver handles, valid from any thread once the context is
// made current there; each `Dev` is used by one thread at a time.
unsafe impl Send for Dev {}

fn name_and_bus(dev: sys::CUdevice, index: u32) -> P2pDevice {
    let mut name = [0 as c_char; 256];
    let mut bus = [0 as c_char; 32];
    // SAFETY: buffer lengths are passed; the strings are NUL-terminated by the driver.
    unsafe {
        let n = sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as c_int, dev);
        let b = sys::cuDeviceGetPCIBusId(bus.as_mut_ptr(), bus.len() as c_int, dev);
        P2pDevice {
            index,
            name: if ok(n) {
                CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned()
            } else {
                format!("unknown ({})", describe(n))
            },
            pci_bus_id: ok(b).then(|| {
                CStr::from_ptr(bus.as_ptr())
                    .to_string_lossy()
                    .to_lowercase()
            }),
        }
    }
}

/// Context, stream, buffers (source filled with `pat`) and events for GPU `index`.
fn set_up(index: u32, pat: &[u8]) -> Result<Dev, String> {
    let n = pat.len();
    // SAFETY: out-parameters are local; every handle is checked before use.
    unsafe {
        let mut dev: sys::CUdevice = 0;
        check(
            sys::cuDeviceGet(&mut dev, index as c_int),
            &format!("cuDeviceGet({index})"),
        )?;
        let info = name_and_bus(dev, index);
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        check(
            sys::cuDevicePrimaryCtxRetain(&mut ctx, dev),
            &format!("GPU{index}: cuDevicePrimaryCtxRetain"),
        )?;
        check(
            sys::cuCtxSetCurrent(ctx),
            &format!("GPU{index}: cuCtxSetCurrent"),
        )?;
        let mut stream: sys::CUstream = std::ptr::null_mut();
        check(
            sys::cuStreamCreate(&mut stream, 0),
            &format!("GPU{index}: cuStreamCreate"),
        )?;
        let mut src: CUdeviceptr = 0;
        let mut dst: CUdeviceptr = 0;
        check(
            sys::cuMemAlloc_v2(&mut src, n),
            &format!("GPU{index}: cuMemAlloc of {n} bytes"),
        )?;
        check(
            sys::cuMemAlloc_v2(&mut dst, n),
            &format!("GPU{index}: cuMemAlloc of {n} bytes"),
        )?;
        check(
            sys::cuMemcpyHtoD_v2(src, pat.as_ptr() as *const c_void, n),
            &format!("GPU{index}: cuMemcpyHtoD of the pattern"),
        )?;
        let mut ev0: sys::CUevent = std::ptr::null_mut();
        let mut ev1: sys::CUevent = std::ptr::null_mut();
        check(
            sys::cuEventCreate(&mut ev0, 0),
            &format!("GPU{index}: cuEventCreate"),
        )?;
        check(
            sys::cuEventCreate(&mut ev1, 0),
            &format!("GPU{index}: cuEventCreate"),
        )?;
        Ok(Dev {
            index,
            dev,
            ctx,
            stream,
            src,
            dst,
            ev0,
            ev1,
            info,
        })
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Method {
    /// `cuMemcpyPeerAsync` on the source GPU's stream.
    Push,
    /// `cuMemcpyDtoDAsync` on the destination GPU's stream, reading the peer pointer.
    Pull,
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Method::Push => "push",
            Method::Pull => "pull",
        }
    }
}

/// Issue one copy of `n` bytes from `from.src` to `to.dst` with `m` on the issuing stream.
///
/// # Safety
/// The issuing GPU's context must be current; buffers hold at least `n` bytes.
unsafe fn copy(m: Method, from: &Dev, to: &Dev, n: usize) -> CUresult {
    // SAFETY: per the function's contract.
    unsafe {
        match m {
            Method::Push => {
                sys::cuMemcpyPeerAsync(to.dst, to.ctx, from.src, from.ctx, n, from.stream)
            }
            Method::Pull => sys::cuMemcpyDtoDAsync_v2(to.dst, from.src, n, to.stream),
        }
    }
}

/// One direction with one method: verified copy, timed copies, latency.
fn direction(
    pair: (u32, u32),
    m: Method,
    from: &Dev,
    to: &Dev,
    pat: &[u8],
    back: &mut [u8],
    iterations: u32,
) -> P2pDirection {
    let mut d = P2pDirection {
        from: from.index,
        to: to.index,
        method: m.name().into(),
        outcome: P2pOutcome::Ok,
        gb_per_s: None,
        latency_us: None,
    };
    let label = format!("{} {}→{}", m.name(), from.index, to.index);
    let issuer = if m == Method::Push { from } else { to };
    let n = pat.len();
    let r: Result<(), String> = (|| {
        // SAFETY: contexts, streams, events and buffers were set up by `set_up`; the host
        // buffer `back` holds `n` bytes.
        unsafe {
            step(Some(pair), format!("{label}: clearing the destination"));
            check(sys::cuCtxSetCurrent(to.ctx), "cuCtxSetCurrent")?;
            check(
                sys::cuMemsetD8Async(to.dst, 0, n, to.stream),
                "cuMemsetD8Async",
            )?;
            check(
                sys::cuStreamSynchronize(to.stream),
                "cuStreamSynchronize after the clear",
            )?;

            step(Some(pair), format!("{label}: one copy, waiting for it"));
            check(sys::cuCtxSetCurrent(issuer.ctx), "cuCtxSetCurrent")?;
            let what = if m == Method::Push {
                "cuMemcpyPeerAsync"
            } else {
                "cuMemcpyDtoDAsync"
            };
            check(copy(m, from, to, n), what)?;
            check(
                sys::cuStreamSynchronize(issuer.stream),
                &format!("cuStreamSynchronize after {what}"),
            )?;

            step(Some(pair), format!("{label}: reading the destination back"));
            check(sys::cuCtxSetCurrent(to.ctx), "cuCtxSetCurrent")?;
            check(
                sys::cuMemcpyDtoH_v2(back.as_mut_ptr() as *mut c_void, to.dst, n),
                "cuMemcpyDtoH of the destination",
            )?;
            d.outcome = verify(pat, back);
            if d.outcome != P2pOutcome::Ok {
                return Ok(());
            }

            step(Some(pair), format!("{label}: {iterations} timed copies"));
            check(sys::cuCtxSetCurrent(issuer.ctx), "cuCtxSetCurrent")?;
            check(
                sys::cuEventRecord(issuer.ev0, issuer.stream),
                "cuEventRecord",
            )?;
            for _ in 0..iterations {
                check(copy(m, from, to, n), what)?;
            }
            check(
                sys::cuEventRecord(issuer.ev1, issuer.stream),
                "cuEventRecord",
            )?;
            check(
                sys::cuEventSynchronize(issuer.ev1),
                "cuEventSynchronize after the timed copies",
            )?;
            let mut ms: f32 = 0.0;
            check(
                sys::cuEventElapsedTime(&mut ms, issuer.ev0, issuer.ev1),
                "cuEventElapsedTime",
            )?;
            if ms > 0.0 {
                let gbs = (n as f64 * f64::from(iterations)) / (f64::from(ms) / 1000.0) / 1e9;
                d.gb_per_s = Some((gbs * 10.0).round() / 10.0);
            }

            step(
                Some(pair),
                format!("{label}: {LATENCY_RUNS} latency copies"),
            );
            let mut times = Vec::with_capacity(LATENCY_RUNS);
            for i in 0..LATENCY_RUNS + 2 {
                check(
                    sys::cuEventRecord(issuer.ev0, issuer.stream),
                    "cuEventRecord",
                )?;
                check(copy(m, from, to, LATENCY_BYTES.min(n)), what)?;
                check(
                    sys::cuEventRecord(issuer.ev1, issuer.stream),
                    "cuEventRecord",
                )?;
                check(
                    sys::cuEventSynchronize(issuer.ev1),
                    "cuEventSynchronize after a latency copy",
                )?;
                let mut ms: f32 = 0.0;
                check(
                    sys::cuEventElapsedTime(&mut ms, issuer.ev0, issuer.ev1),
                    "cuEventElapsedTime",
                )?;
                // The first two warm up.
                if i >= 2 {
                    times.push(f64::from(ms) * 1000.0);
                }
            }
            times.sort_by(f64::total_cmp);
            d.latency_us = times
                .get(times.len() / 2)
                .map(|t| (t * 100.0).round() / 100.0);
            Ok(())
        }
    })();
    if let Err(e) = r {
        d.outcome = P2pOutcome::Error { error: e };
    }
    d
}

/// Enable peer access from `who`'s context to `peer`'s memory.
fn enable_peer(who: &Dev, peer: &Dev) -> Result<(), String> {
    // SAFETY: both contexts are live primary contexts.
    unsafe {
        check(sys::cuCtxSetCurrent(who.ctx), "cuCtxSetCurrent")?;
        let r = sys::cuCtxEnablePeerAccess(peer.ctx, 0);
        if ok(r) || r == CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
            Ok(())
        } else {
            Err(format!(
                "cuCtxEnablePeerAccess GPU{}→GPU{}: {}",
                who.index,
                peer.index,
                describe(r)
            ))
        }
    }
}

fn disable_peer(who: &Dev, peer: &Dev) {
    // SAFETY: both contexts are live; an error (not enabled) is harmless here.
    unsafe {
        sys::cuCtxSetCurrent(who.ctx);
        sys::cuCtxDisablePeerAccess(peer.ctx);
    }
}

fn can_access(a: &Dev, b: &Dev) -> Probed<bool> {
    let mut v: c_int = 0;
    // SAFETY: a plain out-parameter.
    let r = unsafe { sys::cuDeviceCanAccessPeer(&mut v, a.dev, b.dev) };
    if ok(r) {
        Probed::Value(v == 1)
    } else {
        Probed::failed(format!("cuDeviceCanAccessPeer: {}", describe(r)))
    }
}

fn test_pair(a: &Dev, b: &Dev, pat: &[u8], back: &mut [u8], iterations: u32) {
    let pair = (a.index, b.index);
    let start = Instant::now();
    emit(&ChildEvent::PairStart {
        a: pair.0,
        b: pair.1,
    });
    step(Some(pair), "cuDeviceCanAccessPeer");
    emit(&ChildEvent::Driver {
        a: pair.0,
        b: pair.1,
        can_ab: can_access(a, b),
        can_ba: can_access(b, a),
    });
    step(
        Some(pair),
        format!("cuCtxEnablePeerAccess {}↔{}", a.index, b.index),
    );
    let error = match enable_peer(a, b).and_then(|()| enable_peer(b, a)) {
        Err(e) => Some(e),
        Ok(()) => {
            for (m, from, to) in [
                (Method::Push, a, b),
                (Method::Push, b, a),
                (Method::Pull, a, b),
                (Method::Pull, b, a),
            ] {
                let d = direction(pair, m, from, to, pat, back, iterations);
                emit(&ChildEvent::Direction {
                    a: pair.0,
                    b: pair.1,
                    direction: d,
                });
            }
            None
        }
    };
    step(
        Some(pair),
        format!("cuCtxDisablePeerAccess {}↔{}", a.index, b.index),
    );
    disable_peer(a, b);
    disable_peer(b, a);
    emit(&ChildEvent::PairEnd {
        a: pair.0,
        b: pair.1,
        error,
        wall_ms: (start.elapsed().as_secs_f64() * 10_000.0).round() / 10.0,
    });
}

/// Run the child; the exit code is 0 unless the output could not be written.
pub fn main(args: &ChildArgs) -> i32 {
    // SAFETY: only tries to dlopen libcuda; it panics nowhere.
    if !unsafe { sys::is_culib_present() } {
        emit(&ChildEvent::Skipped {
            reason: "libcuda.so not found: no NVIDIA driver on this host (the P2P probe needs the CUDA driver)".into(),
            code: ReasonCode::NoDriver,
        });
        return 0;
    }
    let Ok(n) = usize::try_from(args.bytes) else {
        emit(&ChildEvent::Fatal {
            error: format!("{} bytes do not fit in memory", args.bytes),
        });
        return 0;
    };
    // The pattern and the read-back buffer (its pages touched) are made while cuInit runs.
    let buffers = std::thread::spawn(move || (pattern(n, SEED), vec![1u8; n]));
    step(None, "cuInit");
    // SAFETY: libcuda is present (checked above).
    let count = unsafe {
        let r = sys::cuInit(0);
        if r == CUresult::CUDA_ERROR_NO_DEVICE {
            emit(&ChildEvent::Skipped {
                reason: "the CUDA driver sees no GPU (cuInit: CUDA_ERROR_NO_DEVICE)".into(),
                code: ReasonCode::NoDriver,
            });
            return 0;
        }
        if !ok(r) {
            emit(&ChildEvent::Fatal {
                error: format!("cuInit: {}", describe(r)),
            });
            return 0;
        }
        let mut c: c_int = 0;
        if let Err(e) = check(sys::cuDeviceGetCount(&mut c), "cuDeviceGetCount") {
            emit(&ChildEvent::Fatal { error: e });
            return 0;
        }
        u32::try_from(c).unwrap_or(0)
    };
    let gpus: Vec<u32> = match &args.gpus {
        GpuSelection::All => (0..count).collect(),
        GpuSelection::List(l) => {
            if let Some(bad) = l.iter().find(|&&g| g >= count) {
                emit(&ChildEvent::Fatal {
                    error: format!(
                        "GPU {bad} asked for, but the CUDA driver sees {count} GPU(s) (CUDA_VISIBLE_DEVICES={})",
                        std::env::var("CUDA_VISIBLE_DEVICES").unwrap_or_else(|_| "unset".into())
                    ),
                });
                return 0;
            }
            l.clone()
        }
    };
    if gpus.len() < 2 {
        emit(&ChildEvent::Skipped {
            reason: format!("the CUDA driver sees {count} GPU(s): nothing to pair"),
            code: ReasonCode::NotSupported,
        });
        return 0;
    }
    let Ok((pat, mut back)) = buffers.join() else {
        emit(&ChildEvent::Fatal {
            error: "the thread making the pattern panicked".into(),
        });
        return 0;
    };
    step(
        None,
        format!(
            "setting up GPUs {} (primary context, stream, 2 × {} MiB, pattern upload)",
            gpus.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(","),
            n >> 20
        ),
    );
    // Contexts are created in parallel: creating one takes a while, and they are independent.
    let set: Vec<Result<Dev, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = gpus
            .iter()
            .map(|&g| {
                let pat = &pat;
                s.spawn(move || set_up(g, pat))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a set-up thread panicked".into()))
            })
            .collect()
    });
    let mut devs = Vec::new();
    for d in set {
        match d {
            Ok(d) => devs.push(d),
            Err(e) => {
                emit(&ChildEvent::Fatal { error: e });
                return 0;
            }
        }
    }
    emit(&ChildEvent::Devices {
        devices: devs.iter().map(|d| d.info.clone()).collect(),
    });
    let by_index = |i: u32| devs.iter().find(|d| d.index == i);
    for (a, b) in pairs_of(&gpus) {
        if let (Some(da), Some(db)) = (by_index(a), by_index(b)) {
            test_pair(da, db, &pat, &mut back, args.iterations);
        }
    }
    emit(&ChildEvent::Done);
    // Everything is reported (each line was flushed). Leave without the CUDA library's exit
    // handlers: the kernel driver releases the contexts and memory when the process's device
    // files close, as it does for any killed CUDA process, and the parent need not wait.
    // SAFETY: _exit ends the process at once; nothing here needs unwinding or flushing.
    unsafe { libc::_exit(0) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_is_deterministic_and_varied() {
        let p = pattern(1 << 16, 7);
        assert_eq!(p, pattern(1 << 16, 7));
        assert_ne!(p, pattern(1 << 16, 8));
        assert_eq!(pattern(13, 7).len(), 13);
        // No byte value dominates: every value appears in 64 KiB.
        let mut seen = [false; 256];
        for b in &p {
            seen[*b as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
    }

    #[test]
    fn verify_counts_every_differing_byte() {
        let e = pattern(4096, 1);
        assert_eq!(verify(&e, &e), P2pOutcome::Ok);
        let mut g = e.clone();
        g[100] ^= 0xff;
        g[4000] ^= 0x01;
        assert_eq!(
            verify(&e, &g),
            P2pOutcome::WrongData {
                mismatched_bytes: 2,
                first_offset: 100,
                expected: e[100],
                got: e[100] ^ 0xff
            }
        );
        // A copy that never arrived leaves the cleared destination.
        let zeros = vec![0u8; 4096];
        let P2pOutcome::WrongData {
            mismatched_bytes, ..
        } = verify(&e, &zeros)
        else {
            panic!("zeros pass");
        };
        assert!(mismatched_bytes > 4000);
    }
}
