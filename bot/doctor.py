"""Prints `core.doctor` checks for the terminal."""

from __future__ import annotations

from core.doctor import diagnose


async def run_doctor(service) -> int:
    checks = await diagnose(service)
    for check in checks:
        mark = "✓" if check.ok and not check.warning else ("!" if check.ok else "✗")
        print(f"{mark} {check.name:<13} {check.detail}")
    return 0 if all(c.ok for c in checks) else 1
