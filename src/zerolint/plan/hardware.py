"""The hardware `zerolint plan` plans for: GPUs per node and nodes, memory, and the rates its step-time model uses.

A preset (`--gpu h100`) fills the figures a user rarely knows; any of them can be given instead. The rates are
public datasheet figures, so every step time the plan prints says what it assumed:

- dense 16-bit tensor throughput (bf16/fp16 with fp32 accumulation, no sparsity) per GPU;
- the GPU-to-GPU bandwidth inside a node (NVLink where the part has it, else PCIe), per direction;
- the network bandwidth per GPU between nodes (one 400 Gb/s NIC per GPU on H100/H200 systems, 200 Gb/s on A100);
- host-to-GPU PCIe bandwidth per GPU (Gen4 x16 ~ 25 GB/s measured, Gen5 ~ 50 GB/s);
- CPU Adam throughput per node (DeepSpeedCPUAdam, AVX-512, all cores: a 1-billion-parameter update in about a
  quarter of a second on a 2-socket server, ZeRO-Offload, Ren et al. 2021, section 5) and NVMe bandwidth per node.
"""

from __future__ import annotations

from dataclasses import dataclass

GB = 10**9  # bandwidths are decimal (datasheets); memory sizes are binary (parse_bytes)

# name: (memory GiB, dense 16-bit TFLOPS, intra-node GB/s per direction, network GB/s per GPU, PCIe GB/s)
PRESETS: dict[str, tuple[float, float, float, float, float]] = {
    "h200": (139.0, 989.0, 450.0, 50.0, 50.0),  # 141 GB on the box; torch sees about 139 GiB
    "h100": (80.0, 989.0, 450.0, 50.0, 50.0),
    "a100-80gb": (80.0, 312.0, 300.0, 25.0, 25.0),
    "a100-40gb": (40.0, 312.0, 300.0, 25.0, 25.0),
    "l40s": (48.0, 362.0, 25.0, 12.5, 25.0),
    "l4": (24.0, 121.0, 25.0, 12.5, 25.0),
    "rtx4090": (24.0, 165.0, 25.0, 12.5, 25.0),
    "v100-32gb": (32.0, 125.0, 150.0, 12.5, 12.5),
}


@dataclass(frozen=True)
class Hardware:
    gpus_per_node: int = 1
    nodes: int = 1
    gpu_memory: int = 80 * 2**30  # bytes
    host_memory: int | None = None  # bytes per node; None: not limited (the plan says so)
    nvme: int | None = None  # bytes per node for NVMe offload; None: no NVMe candidates
    tflops: float = 989.0  # dense 16-bit per GPU
    mfu: float = 0.45  # the fraction of peak a large micro batch reaches
    intra_gbps: float = 450.0  # GB/s per direction between GPUs of a node
    network_gbps: float = 50.0  # GB/s per GPU between nodes
    pcie_gbps: float = 25.0  # GB/s per GPU, host <-> GPU
    cpu_adam_params_per_s: float = 4e9  # per node
    nvme_gbps: float = 6.0  # GB/s per node, read and write alike
    gpu: str = ""  # the preset's name, when one was used

    @property
    def world(self) -> int:
        return self.gpus_per_node * self.nodes

    def describe(self) -> str:
        from ..estimate.memory import gib

        name = f"{self.gpu} " if self.gpu else ""
        host = f", {gib(self.host_memory):.0f} GiB host per node" if self.host_memory else ", host memory not given"
        nvme = f", {gib(self.nvme):.0f} GiB NVMe per node" if self.nvme else ""
        return (f"{self.nodes} node{'s' * (self.nodes != 1)} x {self.gpus_per_node} {name}GPU"
                f"{'s' * (self.gpus_per_node != 1)} ({gib(self.gpu_memory):.0f} GiB each){host}{nvme}")

    def assumptions(self) -> list[str]:
        out = [f"compute: {self.tflops:g} TFLOPS dense 16-bit per GPU at up to {self.mfu:.0%} of peak (a micro step "
               "of 1,024 tokens per GPU reaches half of that, a model of hidden size h < 4,096 sqrt(h / 4,096) of "
               "it)"]
        if self.world > 1:
            out.append(f"collectives: ring algorithms, {self.intra_gbps:g} GB/s per GPU inside a node"
                       + (f", {self.network_gbps:g} GB/s per GPU between nodes (the slower link bounds a ring that "
                          "spans nodes)" if self.nodes > 1 else ""))
        out.append(f"offload: {self.pcie_gbps:g} GB/s PCIe per GPU; CPU Adam {self.cpu_adam_params_per_s:.1e} "
                   f"parameters/s per node" + (f"; NVMe {self.nvme_gbps:g} GB/s per node" if self.nvme else ""))
        return out


def preset(name: str) -> dict[str, float | str]:
    """The Hardware fields a preset sets; ValueError names the known presets."""
    key = name.strip().lower()
    if key not in PRESETS:
        raise ValueError(f"unknown GPU {name!r}; known: {', '.join(PRESETS)} (or give --gpu-memory and --gpu-tflops)")
    mem, tflops, intra, net, pcie = PRESETS[key]
    return {"gpu_memory": int(mem * 2**30), "tflops": tflops, "intra_gbps": intra, "network_gbps": net,
            "pcie_gbps": pcie, "gpu": key}
