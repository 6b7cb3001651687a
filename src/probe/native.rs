//! The native IPC probe: the CUDA driver API through cudarc (libcuda loaded at run time), no
//! Python. A plain `cuMemAlloc` and a VMM allocation (`cuMemCreate` + `cuMemMap`, what
//! expandable segments use), each asked for a legacy IPC handle and the pointer attribute.

use crate::snapshot::{IpcProbeRun, Probed};
use cudarc::driver::sys::{self, CUdeviceptr, CUresult};
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

const SIZE: usize = 64 << 20;

/// (handle obtained, error text, legacy IPC capable) for one allocation.
type IpcAnswer = (Probed<bool>, Option<String>, Probed<bool>);

pub(crate) fn ok(r: CUresult) -> bool {
    r == CUresult::CUDA_SUCCESS
}

/// `CUDA_ERROR_INVALID_VALUE (invalid argument)`.
pub(crate) fn describe(r: CUresult) -> String {
    let mut name: *const c_char = std::ptr::null();
    let mut text: *const c_char = std::ptr::null();
    // SAFETY: both calls only write a pointer to a static string owned by the driver.
    unsafe {
        sys::cuGetErrorName(r, &mut name);
        sys::cuGetErrorString(r, &mut text);
    }
    let s = |p: *const c_char| {
        if p.is_null() {
            None
        } else {
            // SAFETY: non-null pointers from cuGetError* are NUL-terminated static strings.
            Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        }
    };
    match (s(name), s(text)) {
        (Some(n), Some(t)) => format!("{n} ({t})"),
        (Some(n), None) => n,
        _ => format!("{r:?}"),
    }
}

pub(crate) fn check(r: CUresult, what: &str) -> Result<(), String> {
    if ok(r) {
        Ok(())
    } else {
        Err(format!("{what}: {}", describe(r)))
    }
}

/// Ask for a legacy IPC handle on `ptr` and read the pointer attribute.
fn ipc_on(ptr: CUdeviceptr) -> IpcAnswer {
    // SAFETY: `handle` and `cap` are plain out-parameters of the right size; `ptr` is a live
    // device allocation in the current context.
    unsafe {
        let mut handle: sys::CUipcMemHandle = std::mem::zeroed();
        let r = sys::cuIpcGetMemHandle(&mut handle, ptr);
        let (handle_ok, err) = if ok(r) {
            (Probed::Value(true), None)
        } else {
            (Probed::Value(false), Some(describe(r)))
        };
        let mut cap: c_int = -1;
        let r = sys::cuPointerGetAttribute(
            &mut cap as *mut c_int as *mut c_void,
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
            ptr,
        );
        let capable = if ok(r) {
            Probed::Value(cap == 1)
        } else {
            Probed::failed(format!("cuPointerGetAttribute: {}", describe(r)))
        };
        (handle_ok, err, capable)
    }
}

fn run(
    role: &str,
    allocator: &str,
    expandable: bool,
    device: &str,
    start: Instant,
    r: Result<IpcAnswer, String>,
) -> IpcProbeRun {
    let (ipc_handle_ok, ipc_error, legacy_ipc_capable) = match r {
        Ok(v) => v,
        Err(e) => (Probed::failed(e.clone()), None, Probed::failed(e)),
    };
    IpcProbeRun {
        path: "native".into(),
        role: role.into(),
        allocator: allocator.into(),
        alloc_conf: None,
        expandable,
        ipc_handle_ok,
        ipc_error,
        legacy_ipc_capable,
        device: Some(device.to_string()),
        wall_ms: start.elapsed().as_secs_f64() * 1000.0,
    }
}

fn plain(device: &str) -> IpcProbeRun {
    let start = Instant::now();
    // SAFETY: allocate, probe, free; the pointer is not used after cuMemFree.
    let r = unsafe {
        let mut ptr: CUdeviceptr = 0;
        match check(sys::cuMemAlloc_v2(&mut ptr, SIZE), "cuMemAlloc") {
            Ok(()) => {
                let out = ipc_on(ptr);
                sys::cuMemFree_v2(ptr);
                Ok(out)
            }
            Err(e) => Err(e),
        }
    };
    run("plain", "cuMemAlloc", false, device, start, r)
}

fn vmm(dev: sys::CUdevice, device: &str) -> IpcProbeRun {
    let start = Instant::now();
    // SAFETY: each step's resources are released in reverse order on every path below.
    let r = unsafe {
        let mut prop: sys::CUmemAllocationProp = std::mem::zeroed();
        prop.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.requestedHandleTypes = sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE;
        prop.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = dev;
        let mut gran: usize = 0;
        let step = check(
            sys::cuMemGetAllocationGranularity(
                &mut gran,
                &prop,
                sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
            ),
            "cuMemGetAllocationGranularity",
        );
        step.and_then(|()| {
            let size = SIZE.div_ceil(gran.max(1)) * gran.max(1);
            let mut handle: sys::CUmemGenericAllocationHandle = 0;
            check(sys::cuMemCreate(&mut handle, size, &prop, 0), "cuMemCreate")?;
            let mut ptr: CUdeviceptr = 0;
            let out = check(
                sys::cuMemAddressReserve(&mut ptr, size, 0, 0, 0),
                "cuMemAddressReserve",
            )
            .and_then(|()| {
                let mapped =
                    check(sys::cuMemMap(ptr, size, 0, handle, 0), "cuMemMap").and_then(|()| {
                        let mut desc: sys::CUmemAccessDesc = std::mem::zeroed();
                        desc.location = prop.location;
                        desc.flags = sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
                        let r = check(sys::cuMemSetAccess(ptr, size, &desc, 1), "cuMemSetAccess")
                            .map(|()| ipc_on(ptr));
                        sys::cuMemUnmap(ptr, size);
                        r
                    });
                sys::cuMemAddressFree(ptr, size);
                mapped
            });
            sys::cuMemRelease(handle);
            out
        })
    };
    run("vmm", "cuMemCreate+cuMemMap", true, device, start, r)
}

fn device_name(dev: sys::CUdevice) -> String {
    let mut buf = [0 as c_char; 256];
    let mut major: c_int = 0;
    let mut minor: c_int = 0;
    // SAFETY: the buffer's length is passed; the attribute outputs are plain ints.
    unsafe {
        sys::cuDeviceGetName(buf.as_mut_ptr(), buf.len() as c_int, dev);
        sys::cuDeviceGetAttribute(
            &mut major,
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            dev,
        );
        sys::cuDeviceGetAttribute(
            &mut minor,
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            dev,
        );
        let name = CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned();
        format!("{name} ({major}.{minor})")
    }
}

fn probe_device0() -> Probed<Vec<IpcProbeRun>> {
    // SAFETY: every call below is guarded by libcuda being present (checked by the caller) and
    // the context is retained and released around the allocations.
    unsafe {
        let r = sys::cuInit(0);
        if r == CUresult::CUDA_ERROR_NO_DEVICE {
            return Probed::skipped("the CUDA driver sees no GPU (cuInit: CUDA_ERROR_NO_DEVICE)");
        }
        if !ok(r) {
            return Probed::failed(format!("cuInit: {}", describe(r)));
        }
        let mut dev: sys::CUdevice = 0;
        if let Err(e) = check(sys::cuDeviceGet(&mut dev, 0), "cuDeviceGet") {
            return Probed::failed(e);
        }
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        if let Err(e) = check(
            sys::cuDevicePrimaryCtxRetain(&mut ctx, dev),
            "cuDevicePrimaryCtxRetain",
        ) {
            return Probed::failed(e);
        }
        let runs = match check(sys::cuCtxSetCurrent(ctx), "cuCtxSetCurrent") {
            Ok(()) => {
                let name = device_name(dev);
                Probed::Value(vec![plain(&name), vmm(dev, &name)])
            }
            Err(e) => Probed::failed(e),
        };
        sys::cuDevicePrimaryCtxRelease_v2(dev);
        runs
    }
}

/// Run the native probe on GPU 0 under `timeout`. Skipped when libcuda is absent.
pub fn probe(timeout: Duration) -> Probed<Vec<IpcProbeRun>> {
    // SAFETY: only tries to dlopen libcuda; it panics nowhere.
    if !unsafe { sys::is_culib_present() } {
        return Probed::skipped(crate::snapshot::Reason::new(
            crate::snapshot::ReasonCode::NoDriver,
            "libcuda.so not found: no NVIDIA driver on this host (native probe needs the CUDA driver)",
        ));
    }
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(probe_device0());
    });
    rx.recv_timeout(timeout).unwrap_or_else(|_| {
        Probed::failed(crate::snapshot::Reason::new(
            crate::snapshot::ReasonCode::Timeout,
            format!(
                "the CUDA driver did not answer within {:.0} s",
                timeout.as_secs_f64()
            ),
        ))
    })
}
