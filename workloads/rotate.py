"""rotate: CPU work inside a C extension that releases the GIL (seeds/003).

Each item is a generated RGB image rotated by 1 degree ten times in a row
with Pillow; the result is a digest of the output pixels. Pillow releases
the GIL while it rotates, so threads can run rotations in parallel.
"""

import functools
import hashlib
import random

from concbench import schema

from .base import (ITEMS, PROCESSES_FULL, SEED, THREADS_FULL, Option, Workload,
                   preset)


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
    PRESETS = {
        "quick": preset(["sequential", "threads-2", "processes-2-chunk-4",
                         "asyncio", "uvloop", "asyncio-serial", "hybrid-2"],
                        # Large enough that threads show what they do on
                        # the default sizes (2x on 2 cores), small enough
                        # for a smoke run.
                        items=16, image_size=384),
        "default": preset(["sequential", "threads-2", "threads-4",
                           "processes-2-chunk-4", "processes-4-chunk-4",
                           # Python 3.14's default start method on Linux.
                           "processes-2-chunk-4-forkserver",
                           "asyncio", "uvloop",
                           # Left out, with the reason (subinterpreters): in
                           # the list so that --list and every run say why.
                           "interpreters-2-chunk-4"],
                          **DEFAULT_SIZES),
        "wide": preset(["sequential", "threads-2", "threads-2-chunk-4",
                        "threads-4", "threads-8",
                        "threads-4-reuse", "processes-1-chunk-4",
                        "processes-2-chunk-4", "processes-4-chunk-4",
                        "processes-2-chunk-1", "processes-2-chunk-4-reuse",
                        "processes-2-chunk-4-forkserver",
                        "asyncio", "uvloop", "asyncio-serial", "hybrid-2",
                        "hybrid-4", "interpreters-2-chunk-4"],
                       **DEFAULT_SIZES),
        "full": preset(["sequential"]
                       + ["threads-%d" % n for n in THREADS_FULL[:7]]
                       + ["threads-4-reuse"]
                       + ["processes-%d-chunk-1" % n for n in PROCESSES_FULL]
                       + ["processes-%d-chunk-4" % n for n in PROCESSES_FULL]
                       + ["processes-2-chunk-4-reuse", "asyncio", "uvloop",
                          "asyncio-serial", "hybrid-2", "hybrid-4"],
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
