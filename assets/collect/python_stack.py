# sm120-doctor: report the Python stack as JSON lines. Argument: "fast" (package metadata only)
# or "full" (then import torch, last, for its CUDA build and arch list).
# Line 1 is printed and flushed before torch is imported, so a hang there loses nothing else.
import json
import os
import sys


def dist_version(names):
    from importlib import metadata
    for n in names:
        try:
            return metadata.version(n)
        except Exception:
            pass
    return None


def package_dir(name):
    import importlib.util
    try:
        spec = importlib.util.find_spec(name)
    except Exception:
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def torch_cuda_from_file(torch_dir):
    # torch/version.py holds `cuda: Optional[str] = '13.0'`; read it without importing torch.
    try:
        with open(os.path.join(torch_dir, "version.py")) as f:
            for line in f:
                if line.startswith("cuda"):
                    v = line.split("=", 1)[1].strip().strip("'\"")
                    return None if v == "None" else v
    except OSError:
        pass
    return None


def deep_gemm_build(vllm_dir):
    # The DeepGEMM vLLM imports: site-packages `deep_gemm` first, else vLLM's vendored copy
    # (vllm/utils/deep_gemm.py). Never imported here (its __init__ imports torch and initialises
    # CUDA); the SM120 JIT headers tell an SM120 build from one without, __version__ cannot.
    candidates = [(package_dir("deep_gemm"), "site-packages")]
    if vllm_dir:
        candidates.append((os.path.join(vllm_dir, "third_party", "deep_gemm"), "vendored"))
    for d, origin in candidates:
        if not d or not os.path.isfile(os.path.join(d, "__init__.py")):
            continue
        out = {"dir": d, "origin": origin, "version": None}
        try:
            with open(os.path.join(d, "__init__.py")) as f:
                for line in f:
                    if line.startswith("__version__"):
                        out["version"] = line.split("=", 1)[1].strip().strip("'\"")
                        break
        except OSError:
            pass
        impls = os.path.join(d, "include", "deep_gemm", "impls")
        try:
            names = os.listdir(impls)
        except OSError as e:
            out["error"] = "cannot list %s: %s" % (impls, e)
            return out
        out["sm120_kernels"] = len([n for n in names if n.startswith("sm120_") and n.endswith(".cuh")])
        return out
    return None


def nvcc_version():
    import shutil
    import subprocess
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
        cand = os.path.join(home, "bin", "nvcc")
        nvcc = cand if os.path.exists(cand) else None
    if nvcc is None:
        return None
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=5).stdout
    except Exception:
        return None
    for part in out.replace(",", " ").split():
        if part.startswith("V") and part[1:2].isdigit():
            return part[1:]
    return None


mode = sys.argv[1] if len(sys.argv) > 1 else "fast"
meta = {
    "stage": "meta",
    "python": sys.version.split()[0],
    "executable": sys.executable,
    "packages": {
        "vllm": dist_version(["vllm"]),
        "torch": dist_version(["torch"]),
        "triton": dist_version(["triton", "pytorch-triton"]),
        "flashinfer": dist_version(["flashinfer-python", "flashinfer"]),
        "deep_gemm": dist_version(["deep_gemm", "deep-gemm"]),
    },
    "nvcc": nvcc_version(),
}
vllm_dir = package_dir("vllm")
if vllm_dir:
    cfg = os.path.join(vllm_dir, "model_executor", "layers", "quantization", "utils", "configs")
    meta["fp8_config_dir"] = cfg
    try:
        meta["fp8_config_files"] = sorted(os.listdir(cfg))
    except OSError as e:
        meta["fp8_config_error"] = str(e)
meta["deep_gemm_build"] = deep_gemm_build(vllm_dir)
torch_dir = package_dir("torch")
if torch_dir:
    meta["torch_cuda_file"] = torch_cuda_from_file(torch_dir)
print(json.dumps(meta), flush=True)

if mode == "full" and torch_dir:
    out = {"stage": "torch"}
    try:
        import torch
        out["torch"] = torch.__version__
        out["torch_cuda"] = torch.version.cuda
        flags = getattr(torch._C, "_cuda_getArchFlags", None)
        archs = flags() if flags else None
        out["arch_list"] = archs.split() if archs else torch.cuda.get_arch_list()
    except Exception as e:
        out["error"] = "%s: %s" % (type(e).__name__, e)
    print(json.dumps(out), flush=True)
