#!/usr/bin/env python3
"""Write the project's hand-made hwloc XML 2.0 fixtures (loadable by hwloc 2.9):
  nvlink-8gpu.xml  2 sockets, 8 x A100-SXM4-80GB, 6 NVSwitches, 2 NVLinks per
                   GPU-switch pair (50000 MB/s; 300 GB/s GPU-GPU after merging
                   switch ports), like a DGX/HGX A100
  pcie-8gpu.xml    2 sockets, 8 x L40S-48GB on PCIe 4.0 x16 (31.5 GB/s) behind
                   two PCIe switches per socket, no NVLink
Run from this folder: ./gen-fixtures.py  (the XML files are committed)."""
import itertools

gp = itertools.count(1)


def pus(sock, cores=8):
    out = []
    for c in range(cores):
        i = sock * cores + c
        cs = "0x%08x" % (1 << i)
        out.append(f'      <object type="Core" os_index="{c}" cpuset="{cs}" complete_cpuset="{cs}" gp_index="{next(gp)}">\n'
                   f'        <object type="PU" os_index="{i}" cpuset="{cs}" complete_cpuset="{cs}" gp_index="{next(gp)}"/>\n'
                   f'      </object>\n')
    return "".join(out)


def gpu(bus, idx, model, mem_kib, link, nvml, ids):
    pci = f"0000:{bus:02x}:00.0"
    s = (f'          <object type="Bridge" gp_index="{next(gp)}" bridge_type="1-1" depth="1" bridge_pci="0000:[{bus:02x}-{bus:02x}]" pci_busid="0000:{bus-1:02x}:0{idx % 4}.0" pci_type="0604 [10b5:c010] [10b5:c010] b0" pci_link_speed="{link}">\n'
         f'            <object type="PCIDev" gp_index="{next(gp)}" pci_busid="{pci}" pci_type="0302 [10de:20b2] [10de:1463] a1" pci_link_speed="{link}">\n')
    if nvml:
        g = next(gp)
        ids.append(f"OSDev:{g}")
        s += (f'              <object type="OSDev" gp_index="{g}" name="nvml{idx}" osdev_type="5">\n'
              f'                <info name="Backend" value="NVML"/>\n'
              f'                <info name="GPUVendor" value="NVIDIA Corporation"/>\n'
              f'                <info name="GPUModel" value="{model}"/>\n'
              f'              </object>\n')
    s += (f'              <object type="OSDev" gp_index="{next(gp)}" name="cuda{idx}" subtype="CUDA" osdev_type="5">\n'
          f'                <info name="Backend" value="CUDA"/>\n'
          f'                <info name="GPUVendor" value="NVIDIA Corporation"/>\n'
          f'                <info name="GPUModel" value="{model}"/>\n'
          f'                <info name="CUDAGlobalMemorySize" value="{mem_kib}"/>\n'
          f'              </object>\n'
          f'            </object>\n'
          f'          </object>\n')
    return s


def switch(bus, ids):
    g = next(gp)
    ids.append(f"PCIDev:{g}")
    return (f'          <object type="PCIDev" gp_index="{g}" subtype="NVSwitch" pci_busid="0000:{bus:02x}:00.0" pci_type="0680 [10de:1af1] [10de:0000] a1" pci_link_speed="1.000000"/>\n')


def machine(model, mem_kib, link, nvlink):
    ids_gpu, ids_sw = [], []
    body = ""
    for sock in range(2):
        cs = "0x%08x" % (0xff << (sock * 8))
        ns = "0x%08x" % (1 << sock)
        body += (f'    <object type="Package" os_index="{sock}" cpuset="{cs}" complete_cpuset="{cs}" nodeset="{ns}" complete_nodeset="{ns}" gp_index="{next(gp)}">\n'
                 f'      <object type="NUMANode" os_index="{sock}" cpuset="{cs}" complete_cpuset="{cs}" nodeset="{ns}" complete_nodeset="{ns}" gp_index="{next(gp)}" local_memory="274877906944"/>\n')
        body += pus(sock)
        body += (f'      <object type="Bridge" gp_index="{next(gp)}" bridge_type="0-1" depth="0" bridge_pci="0000:[{sock * 0x80:02x}-{sock * 0x80 + 0x7f:02x}]">\n'
                 f'        <object type="Bridge" gp_index="{next(gp)}" bridge_type="1-1" depth="1" bridge_pci="0000:[{sock * 0x80 + 1:02x}-{sock * 0x80 + 0x7f:02x}]" pci_busid="0000:{sock * 0x80:02x}:01.0" pci_type="0604 [8086:2030] [8086:0000] 04" pci_link_speed="{link}">\n')
        for k in range(4):
            body += gpu(sock * 0x80 + 0x10 * (k + 1), sock * 4 + k, model, mem_kib, link, nvlink, ids_gpu)
        if nvlink:
            for k in range(3):
                body += switch(sock * 0x80 + 0x60 + k, ids_sw)
        body += '        </object>\n      </object>\n    </object>\n'
    xml = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE topology SYSTEM "hwloc2.dtd">\n<topology version="2.0">\n'
           f'  <object type="Machine" os_index="0" cpuset="0x0000ffff" complete_cpuset="0x0000ffff" allowed_cpuset="0x0000ffff" nodeset="0x00000003" complete_nodeset="0x00000003" allowed_nodeset="0x00000003" gp_index="{next(gp)}">\n'
           + body + '  </object>\n')
    if nvlink:
        objs = ids_gpu + ids_sw
        n = len(objs)
        vals = []
        for i in range(n):
            for j in range(n):
                gi, gj = i < 8, j < 8
                vals.append(50000 if gi != gj else 0)
        idx = " ".join(objs) + " "
        v = " ".join(map(str, vals)) + " "
        xml += (f'  <distances2hetero nbobjs="{n}" kind="25" name="NVLinkBandwidth">\n'
                f'    <indexes length="{len(idx)}">{idx}</indexes>\n'
                f'    <u64values length="{len(v)}">{v}</u64values>\n'
                '  </distances2hetero>\n')
    return xml + '</topology>\n'


open("nvlink-8gpu.xml", "w").write(machine("NVIDIA A100-SXM4-80GB", 83886080, "31.507692", True))
gp = itertools.count(1)
open("pcie-8gpu.xml", "w").write(machine("NVIDIA L40S", 50331648, "31.507692", False))
