# sm120-doctor allocator/IPC probe (torch path). Runs under whatever PYTORCH_CUDA_ALLOC_CONF /
# PYTORCH_ALLOC_CONF the parent set, allocates one tensor with torch's caching allocator, asks
# libcudart for a legacy IPC handle on it (as vLLM's custom all-reduce does) and reads
# CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE from libcuda. Prints one JSON line.
import ctypes
import ctypes.util
import json
import os
import sys

IS_LEGACY_CUDA_IPC_CAPABLE = 10
result = {"conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", os.environ.get("PYTORCH_ALLOC_CONF"))}


def emit():
    print(json.dumps(result), flush=True)


def loaded_library(fragment):
    # The copy torch itself loaded, found through this process's memory map.
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                if fragment in os.path.basename(path) and os.path.isfile(path):
                    return path
    except OSError:
        pass
    return None


try:
    import torch
except Exception as e:
    result["error"] = "import torch failed: %s: %s" % (type(e).__name__, e)
    emit()
    sys.exit(0)

result["torch"] = torch.__version__
if not torch.cuda.is_available():
    result["skipped"] = "torch sees no CUDA device"
    emit()
    sys.exit(0)

try:
    result["device"] = "%s (%d.%d)" % ((torch.cuda.get_device_name(0),) + torch.cuda.get_device_capability(0))
    tensor = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
    torch.cuda.synchronize()
    ptr = tensor.data_ptr()

    cudart_path = loaded_library("libcudart") or ctypes.util.find_library("cudart") or "libcudart.so"
    cudart = ctypes.CDLL(cudart_path)
    cudart.cudaGetErrorString.restype = ctypes.c_char_p
    cudart.cudaGetErrorName.restype = ctypes.c_char_p
    handle = ctypes.create_string_buffer(64)
    rc = cudart.cudaIpcGetMemHandle(handle, ctypes.c_void_p(ptr))
    result["ipc_rc"] = rc
    if rc != 0:
        result["ipc_error"] = "%s (%s)" % (
            cudart.cudaGetErrorName(rc).decode(),
            cudart.cudaGetErrorString(rc).decode(),
        )
        cudart.cudaGetLastError()

    libcuda = ctypes.CDLL(loaded_library("libcuda.so") or "libcuda.so.1")
    value = ctypes.c_int(-1)
    arc = libcuda.cuPointerGetAttribute(ctypes.byref(value), IS_LEGACY_CUDA_IPC_CAPABLE, ctypes.c_uint64(ptr))
    result["attr_rc"] = arc
    result["legacy_ipc_capable"] = value.value
except Exception as e:
    result["error"] = "%s: %s" % (type(e).__name__, e)
emit()
