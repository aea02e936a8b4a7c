"""Parser for ``lsdasd -s`` output recorded on IBM Z (the study's HyperPAV listing); never regenerated.

ECKD (3390) geometry with 4 KiB blocks: 15 tracks per cylinder, 12 blocks per track, so a volume's
block count is a whole number of cylinders times 180, and lsdasd's size is blocks x block size in MiB.
"""

from __future__ import annotations

from dataclasses import dataclass

BLOCKS_PER_CYLINDER = 15 * 12  # 3390 tracks per cylinder x 4 KiB blocks per track


@dataclass
class Dasd:
    bus_id: str
    status: str
    name: str
    blksz: int | None = None
    size_mib: int | None = None
    blocks: int | None = None


def parse(text: str) -> list[Dasd]:
    rows = []
    for line in text.splitlines():
        fields = line.split()
        if not fields or line.startswith(("#", "Bus-ID", "---")):
            continue
        if fields[1] == "alias":
            rows.append(Dasd(fields[0], "alias", fields[2]))
        else:
            bus, status, name, _dev, _type, blksz, size, blocks = fields
            rows.append(Dasd(bus, status, name, int(blksz), int(size.removesuffix("MB")), int(blocks)))
    return rows


def problems(rows: list[Dasd]) -> list[str]:
    out = []
    for d in rows:
        if d.status == "alias":
            continue
        if d.blksz == 4096 and d.blocks % BLOCKS_PER_CYLINDER:
            out.append(f"{d.bus_id}: {d.blocks} blocks is not a whole number of 3390 cylinders")
        if d.blocks * d.blksz // (1 << 20) != d.size_mib:
            out.append(f"{d.bus_id}: {d.blocks} x {d.blksz} bytes is not {d.size_mib} MB")
    return out
