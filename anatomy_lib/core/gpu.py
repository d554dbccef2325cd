"""How long work takes on a GPU: the one estimate behind every page that gives one (the scale page's training
hours, the seminar guide's minutes per chapter).

The book computes in float32 and leaves PyTorch's TF32 switch off, so a GPU's matmuls run at its plain fp32
peak (NVIDIA's datasheets; the tensor-core TF32 figures, eight times higher, do not apply). Work is either
counted in FLOPs (training, from ``core.flops``) or measured as wall time on a CPU whose matmul peak was
measured; both are charged at the same share ``UTILISATION`` of the device's peak, so a CPU measurement moves to
a GPU by the ratio of the two peaks. An estimate, and an optimistic one for small models, which use a GPU less
well than a CPU; data-parallel scaling over several GPUs is taken as perfect.
"""
from __future__ import annotations

FP32_TFLOPS = {"Colab T4": 8.1, "A100": 19.5, "H100": 66.9, "H200": 66.9}  # dense fp32 peaks (NVIDIA datasheets; SXM)
UTILISATION = 0.4  # the share of a peak the work sustains (the growth models reach about this on a CPU)


def _peak(gpu: str) -> float:
    if gpu not in FP32_TFLOPS:
        raise ValueError(f"unknown GPU {gpu!r}: choose one of {', '.join(FP32_TFLOPS)}")
    return FP32_TFLOPS[gpu] * 1e12


def gpu_throughput(gpu: str, utilisation: float = UTILISATION) -> float:
    """FLOP/s the convention credits one ``gpu`` with: its fp32 peak at the share ``utilisation``."""
    return _peak(gpu) * utilisation


def gpu_seconds(flops: float, gpu: str, count: int = 1, utilisation: float = UTILISATION) -> float:
    """Seconds that ``flops`` take on ``count`` GPUs of kind ``gpu``."""
    return flops / (count * gpu_throughput(gpu, utilisation))


def from_cpu(cpu_seconds: float, cpu_gflops: float, gpu: str) -> float:
    """Seconds on ``gpu`` for work measured as ``cpu_seconds`` on a CPU whose matmul peak is ``cpu_gflops``: the
    same share of each peak, so the ratio of the peaks."""
    return gpu_seconds(cpu_seconds * cpu_gflops * 1e9 * UTILISATION, gpu)
