//! `python.*`: the Python stack the engine runs on.

use super::{Fact, FactDef, Input, probed, probed_str};
use crate::snapshot::{DeepGemmBuild, Probed, PythonStack};
use crate::value::Value;

pub(super) const FACTS: &[FactDef] = &[
    FactDef {
        name: "python.version",
        about: "Python version",
        derive: |i| py(i, |p| probed_str(&p.python)),
    },
    FactDef {
        name: "python.vllm",
        about: "vLLM version (null when not installed)",
        derive: |i| py(i, |p| probed_str(&p.vllm)),
    },
    FactDef {
        name: "python.torch",
        about: "PyTorch version",
        derive: |i| py(i, |p| probed_str(&p.torch)),
    },
    FactDef {
        name: "python.torch_cuda",
        about: "CUDA version PyTorch was built with",
        derive: |i| py(i, |p| probed_str(&p.torch_cuda)),
    },
    FactDef {
        name: "python.torch_arch_list",
        about: "torch.cuda.get_arch_list()",
        derive: |i| py(i, |p| str_list(&p.torch_arch_list)),
    },
    FactDef {
        name: "python.torch_arch_list_known",
        about: "torch's arch list was collected",
        derive: |i| {
            Fact::new(
                Value::Bool(
                    i.snap
                        .python
                        .value()
                        .is_some_and(|p| matches!(p.torch_arch_list, Probed::Value(_))),
                ),
                source(i),
            )
        },
    },
    FactDef {
        name: "python.torch_has_sm120",
        about: "torch's arch list contains sm_120",
        derive: |i| {
            py(i, |p| match &p.torch_arch_list {
                Probed::Value(l) => Value::Bool(
                    l.iter()
                        .any(|a| a == "sm_120" || a == "sm_120a" || a == "compute_120"),
                ),
                other => Value::unknown(other.why_or("")),
            })
        },
    },
    FactDef {
        name: "python.triton",
        about: "Triton version",
        derive: |i| py(i, |p| probed_str(&p.triton)),
    },
    FactDef {
        name: "python.flashinfer",
        about: "FlashInfer version",
        derive: |i| py(i, |p| probed_str(&p.flashinfer)),
    },
    FactDef {
        name: "python.deep_gemm",
        about: "DeepGEMM version",
        derive: |i| py(i, |p| probed_str(&p.deep_gemm)),
    },
    FactDef {
        name: "python.deep_gemm_sm120",
        about: "the DeepGEMM vLLM imports (site-packages first, else vLLM's vendored copy) has SM120 kernels (include/deep_gemm/impls/sm120_*.cuh)",
        derive: |i| py(i, |p| deep_gemm(p, |b| Value::Bool(b.sm120_kernels > 0))),
    },
    FactDef {
        name: "python.deep_gemm_sm120_known",
        about: "whether the DeepGEMM build's SM120 kernels were read",
        derive: |i| {
            Fact::new(
                Value::Bool(
                    i.snap
                        .python
                        .value()
                        .is_some_and(|p| matches!(p.deep_gemm_build, Probed::Value(_))),
                ),
                source(i),
            )
        },
    },
    FactDef {
        name: "python.deep_gemm_build",
        about: "the DeepGEMM vLLM imports: where it is, its __version__ and its SM120 kernel count",
        derive: |i| {
            py(i, |p| {
                deep_gemm(p, |b| {
                    Value::Str(format!(
                        "{} {} (__version__ {}, {} sm120_*.cuh kernel header(s))",
                        b.origin,
                        b.dir,
                        b.version.as_deref().unwrap_or("not read"),
                        b.sm120_kernels
                    ))
                })
            })
        },
    },
    FactDef {
        name: "python.cuda_toolkit",
        about: "CUDA toolkit (nvcc) version",
        derive: |i| py(i, |p| probed_str(&p.cuda_toolkit)),
    },
    FactDef {
        name: "python.fp8_config_dir",
        about: "vLLM's tuned W8A8 block-FP8 config folder",
        derive: |i| py(i, |p| probed_str(&p.fp8_config_dir)),
    },
    FactDef {
        name: "python.fp8_config_files",
        about: "file names in that folder",
        derive: |i| py(i, |p| str_list(&p.fp8_config_files)),
    },
];

fn source(i: &Input<'_>) -> String {
    format!("{}: Python stack", i.host_origin())
}

fn py(i: &Input<'_>, f: impl FnOnce(&PythonStack) -> Value) -> Fact {
    probed(&i.snap.python, source(i), f)
}

fn deep_gemm(p: &PythonStack, f: impl FnOnce(&DeepGemmBuild) -> Value) -> Value {
    match &p.deep_gemm_build {
        Probed::Value(b) => f(b),
        other => Value::unknown(other.why_or("")),
    }
}

fn str_list(p: &Probed<Vec<String>>) -> Value {
    match p {
        Probed::Value(l) => Value::List(l.iter().map(|a| Value::Str(a.clone())).collect()),
        other => Value::unknown(other.why_or("")),
    }
}
