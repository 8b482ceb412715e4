"""rotate: CPU work inside a C extension that releases the GIL (seeds/003).

Each item is a generated RGB image rotated by 1 degree ten times in a row
with Pillow; the result is a digest of the output pixels. Pillow releases
the GIL while it rotates, so threads can run rotations in parallel.
"""

import functools
import hashlib
import random

from workloads.base import Workload


def rotate_image(image, rotations=10, degrees=1):
    for _ in range(rotations):
        image = image.rotate(degrees)
    return hashlib.blake2b(image.tobytes(), digest_size=16).hexdigest()


class Rotate(Workload):
    name = "rotate"
    kind = "cpu"
    PARAMS = {"items": 64, "seed": 1, "image_size": 384, "rotations": 10}
    async_form = "sync item called inside a coroutine"

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
