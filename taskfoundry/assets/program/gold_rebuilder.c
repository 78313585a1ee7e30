/* The worker's whole attack on a dynamically linked gold (tests/test_integrity_docker.py,
   benchmarks/dump_attack.py): preloaded into the gold, this constructor writes the gold's
   loadable segments back to the file offsets its own program headers (mapped with the first
   page) name, undoes what the loader changed in place (.dynamic's addresses, lazy PLT slots, GOT[1..2]),
   drops the
   section headers, and so rebuilds a runnable copy of an executable it cannot read. Output:
   $TF_REBUILT (default /tmp/rebuilt). A static gold has no loader to preload it into. */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
/* The file offset of the address `vaddr` (link-time), through the PT_LOAD that maps it. */
static long file_offset(struct dl_phdr_info *info, ElfW(Addr) vaddr) {
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD && vaddr >= ph->p_vaddr && vaddr < ph->p_vaddr + ph->p_filesz)
      return (long)(ph->p_offset + (vaddr - ph->p_vaddr));
  }
  return -1;
}

/* Write back `value - base` at `vaddr` when `value` points into the program (the loader added
   the base to it in place; a new run adds its own). */
static void unrelocate(FILE *out, struct dl_phdr_info *info, ElfW(Addr) vaddr, ElfW(Addr) value) {
  long off = file_offset(info, vaddr);
  if (off < 0 || value < info->dlpi_addr || value - info->dlpi_addr > 0x10000000) return;
  value -= info->dlpi_addr;
  fseek(out, off, SEEK_SET);
  fwrite(&value, sizeof value, 1, out);
}

static int rebuild(struct dl_phdr_info *info, size_t size, void *data) {
  if (info->dlpi_name && info->dlpi_name[0]) return 0;  /* the main program comes first, unnamed */
  const char *path = getenv("TF_REBUILT");
  FILE *out = fopen(path ? path : "/tmp/rebuilt", "wb");
  for (int i = 0; out && i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    fseek(out, ph->p_offset, SEEK_SET);
    fwrite((const void *)(info->dlpi_addr + ph->p_vaddr), 1, ph->p_filesz, out);
  }
  ElfW(Addr) jmprel = 0, jmpsize = 0, pltgot = 0;
  for (int i = 0; out && i < info->dlpi_phnum; i++) {  /* the loader relocated .dynamic in place */
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_DYNAMIC) continue;
    const ElfW(Dyn) *dyn = (const void *)(info->dlpi_addr + ph->p_vaddr);
    for (int k = 0; dyn[k].d_tag != DT_NULL; k++) {
      if (dyn[k].d_tag == DT_JMPREL) jmprel = dyn[k].d_un.d_ptr;
      if (dyn[k].d_tag == DT_PLTRELSZ) jmpsize = dyn[k].d_un.d_val;
      if (dyn[k].d_tag == DT_PLTGOT) pltgot = dyn[k].d_un.d_ptr - info->dlpi_addr;
      unrelocate(out, info, ph->p_vaddr + k * sizeof(ElfW(Dyn)) + offsetof(ElfW(Dyn), d_un), dyn[k].d_un.d_ptr);
    }
  }
  /* lazy binding: a PLT slot not called yet holds its stub's address plus the base */
  const ElfW(Rela) *rela = (const void *)jmprel;
  for (ElfW(Addr) n = 0; out && rela && n < jmpsize / sizeof(ElfW(Rela)); n++)
    unrelocate(out, info, rela[n].r_offset, *(const ElfW(Addr) *)(info->dlpi_addr + rela[n].r_offset));
  ElfW(Off) none = 0; ElfW(Half) zero[3] = {0, 0, 0};
  long got = pltgot ? file_offset(info, pltgot) : -1;  /* GOT[1], GOT[2]: the loader's, 0 on disk */
  ElfW(Addr) empty[2] = {0, 0};
  if (out && got >= 0) { fseek(out, got + sizeof(ElfW(Addr)), SEEK_SET); fwrite(empty, sizeof empty, 1, out); }
  if (out) { fseek(out, offsetof(ElfW(Ehdr), e_shoff), SEEK_SET); fwrite(&none, sizeof none, 1, out);
             fseek(out, offsetof(ElfW(Ehdr), e_shentsize), SEEK_SET); fwrite(zero, sizeof zero, 1, out);
             fclose(out); }
  return 1;
}
__attribute__((constructor)) static void start(void) { dl_iterate_phdr(rebuild, 0); }
