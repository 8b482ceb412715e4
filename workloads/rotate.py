"""rotate: CPU work inside a C extension that releases the GIL (seeds/003).

Each item is a generated RGB image rotated by 1 degree ten times in a row
with Pillow; the result is a digest of the output pixels. Pillow releases
the GIL while it rotates, so threads can run rotations in parallel.
"""

import functools
import hashlib
import random

from concbench import schema

from .base import (ALL, DEFAULT, ITEMS, POOL_MAP, PROCESS_POOL_DEFAULT, QUICK, SEED,
                   THREAD_POOL_DEFAULT, USABLE, Option, Workload, ladder, preset)


def rotate_image(image, rotations=10, degrees=1):
    for _ in range(rotations):
        image = image.rotate(degrees)
    return hashlib.blake2b(image.tobytes(), digest_size=16).hexdigest()


# The default preset's sizes, and the wide preset's: its variants at the same sizes.
DEFAULT_SIZES = dict(items=64, image_size=384)


class Rotate(Workload):
    name = "rotate"
    kind = "cpu"
    OPTIONS = (ITEMS.with_default(64), SEED,
               Option("image_size", "--image-size",
                      "width and height of rotate's images, in pixels",
                      int, 1, 8192, default=384),
               Option("rotations", "--rotations", "1-degree rotations per rotate item",
                      int, 1, 1000, default=10))
    REPORTED = (schema.ITEMS_PER_BATCH, "image_size", "rotations", "seed")
    subinterpreters = ("Pillow does not support subinterpreters (its C module "
                       "declares no Py_mod_multiple_interpreters slot), so it "
                       "cannot be imported in an interpreter with its own GIL")
    # Worker counts follow the machine's usable CPUs (concbench.ladder);
    # chunks of 4 images at most, fewer where a pool has many workers.
    PRESETS = {
        "quick": preset(["sequential", ladder("threads-{n}", QUICK),
                         ladder("processes-{n}-chunk-{chunk}", QUICK, chunk=4),
                         "asyncio", "uvloop", "asyncio-serial", ladder("hybrid-{n}", USABLE)],
                        # Large enough that threads show what they do on
                        # the default sizes (smaller images hid Pillow's
                        # parallel rotations: measured in 8c99f0e, git show
                        # 8c99f0e), small enough for a smoke run.
                        items=16, image_size=384),
        "default": preset(["sequential", ladder("threads-{n}", DEFAULT),
                           ladder("processes-{n}-chunk-{chunk}", DEFAULT, chunk=4),
                           # Python 3.14's default start method on Linux.
                           ladder("processes-{n}-chunk-{chunk}-forkserver", USABLE, chunk=4),
                           # What ProcessPoolExecutor() does unasked: one item a task.
                           PROCESS_POOL_DEFAULT,
                           "asyncio", "uvloop",
                           # Left out, with the reason (subinterpreters): in
                           # the list so that --list and every run say why.
                           ladder("interpreters-{n}-chunk-{chunk}", USABLE, chunk=4)],
                          **DEFAULT_SIZES),
        "wide": preset(["sequential", ladder("threads-{n}", ALL),
                        ladder("threads-{n}-chunk-{chunk}", USABLE, chunk=4),
                        ladder("threads-{n}-reuse", USABLE),
                        ladder("processes-{n}-chunk-{chunk}", ALL, chunk=4),
                        # The default's row first: the same work named plainly
                        # after it is left out (concbench.ladder.resolve).
                        THREAD_POOL_DEFAULT, PROCESS_POOL_DEFAULT,
                        ladder("processes-{n}-chunk-1", USABLE),
                        ladder("processes-{n}-chunk-{chunk}", USABLE, chunk=POOL_MAP),
                        ladder("processes-{n}-chunk-{chunk}-reuse", USABLE, chunk=4),
                        ladder("processes-{n}-chunk-{chunk}-forkserver", USABLE, chunk=4),
                        # A Dask cluster, the step past a process pool.
                        ladder("dask-{n}-chunk-{chunk}", ALL, chunk=4),
                        "asyncio", "uvloop", "asyncio-serial", ladder("hybrid-{n}", QUICK),
                        ladder("interpreters-{n}-chunk-{chunk}", USABLE, chunk=4)],
                       **DEFAULT_SIZES),
        "full": preset(["sequential", ladder("threads-{n}", ALL),
                        ladder("threads-{n}-reuse", USABLE),
                        ladder("processes-{n}-chunk-1", ALL),
                        ladder("processes-{n}-chunk-{chunk}", ALL, chunk=4),
                        ladder("processes-{n}-chunk-{chunk}-reuse", USABLE, chunk=4),
                        THREAD_POOL_DEFAULT, PROCESS_POOL_DEFAULT,
                        "asyncio", "uvloop", "asyncio-serial", ladder("hybrid-{n}", QUICK)],
                       items=64, image_size=1024),
    }
    async_form = "sync item called inside a coroutine"
    # Seeded items and their results, made once per run (concbench.run.inputs).
    shared_inputs = True

    def make_items(self):
        from PIL import Image

        rnd = random.Random(self.params["seed"])
        size = self.params["image_size"]
        return [Image.frombytes("RGB", (size, size), rnd.randbytes(size * size * 3))
                for _ in range(self.params["items"])]

    def sync_function(self):
        return functools.partial(rotate_image, rotations=self.params["rotations"])

    def libraries(self):
        return ["Pillow"]
