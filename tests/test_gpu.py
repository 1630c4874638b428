"""The GPU path (docs/architecture.md, "Sandbox"): the sandbox hands the host's NVIDIA devices in, a candidate's
processes keep no address-space cap CUDA could not start under (a memory cgroup caps their memory instead), and on
a host with a GPU a sandboxed candidate trains on it. The last test runs only where there is a GPU."""

from __future__ import annotations

import json
import os
import resource
import stat
from pathlib import Path

import pytest

from agent_k.sandbox import bwrap, gpu_usable
from agent_k.sandbox.bwrap import gpu_devices
from agent_k.sandbox.cgroups import available
from tests.support.sandboxed import run_script


@pytest.mark.skipif(os.geteuid() != 0, reason="making device files needs root")
def test_the_sandbox_is_handed_the_hosts_gpu_devices(tmp_path: Path) -> None:
    """NVIDIA's device files (made here as copies of /dev/null's device numbers) are found; other files are not."""
    null = Path("/dev/null").stat().st_rdev
    for name in ("nvidia0", "nvidiactl", "nvidia-uvm", "nvidia-caps/nvidia-cap1"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        os.mknod(tmp_path / name, stat.S_IFCHR | 0o666, null)
    (tmp_path / "nvidia-notes.txt").write_text("not a device")
    (tmp_path / "null").touch()
    found = gpu_devices(tmp_path)
    assert found == tuple(
        sorted(str(tmp_path / n) for n in ("nvidia-caps/nvidia-cap1", "nvidia-uvm", "nvidia0", "nvidiactl"))
    )


def test_with_a_gpu_a_candidate_has_no_address_space_cap_where_a_cgroup_caps_its_memory(
    tmp_path: Path, sandbox_kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CUDA reserves address space by the size of the GPU's memory and the host's. With a GPU (here /dev/null
    stands in for its device file) a candidate's processes have no address-space cap where a memory cgroup caps
    their memory; where none can be made they keep it, and the mission plans no GPU work."""
    code = "import resource; print('AS', resource.getrlimit(resource.RLIMIT_AS)[0])"
    monkeypatch.setattr(bwrap, "gpu_devices", lambda: ())
    without, _ = run_script(tmp_path / "cpu", code, sandbox_kind, memory_mb=2048)
    monkeypatch.setattr(bwrap, "gpu_devices", lambda: ("/dev/null",))
    with_gpu, _ = run_script(tmp_path / "gpu", code, sandbox_kind, memory_mb=2048)
    assert without.ok and with_gpu.ok, without.stderr_tail + with_gpu.stderr_tail
    cap = int(without.stdout_tail.split("AS")[-1])
    gpu_cap = int(with_gpu.stdout_tail.split("AS")[-1])
    assert cap != resource.RLIM_INFINITY, "without a GPU the address space stays capped"
    cgroup = "memory" in available()
    assert gpu_cap == (resource.RLIM_INFINITY if cgroup else 2048 * 2**20)
    assert gpu_usable() is cgroup and bwrap.gpu_devices() == ("/dev/null",)


@pytest.mark.skipif(not gpu_devices(), reason="no NVIDIA GPU on this host (/dev/nvidia*)")
def test_a_sandboxed_candidate_trains_on_the_hosts_gpu(tmp_path: Path, sandbox_kind: str) -> None:
    """A few steps of a convolution's training inside the sandbox, on the GPU."""
    assert gpu_usable(), "a GPU is here, so a memory cgroup must be too for candidates to use it"
    result, workdir = run_script(
        tmp_path,
        """
        import json, torch
        net = torch.nn.Conv2d(3, 8, 3).cuda()
        optimiser = torch.optim.SGD(net.parameters(), lr=0.1)
        for _ in range(5):
            optimiser.zero_grad()
            loss = net(torch.randn(16, 3, 32, 32, device="cuda")).square().mean()
            loss.backward()
            optimiser.step()
        json.dump({"device": str(loss.device), "name": torch.cuda.get_device_name(0)}, open("gpu.json", "w"))
        """,
        sandbox_kind,
        outputs=("gpu.json",),
        timeout_s=120,
    )
    assert result.ok, result.stderr_tail
    found = json.loads((workdir / "gpu.json").read_text())
    assert found["device"] == "cuda:0" and found["name"], found
