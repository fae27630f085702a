"""The `diffusers` engine: text-to-image, image-to-image and text-to-video with the
diffusers library. Needs a GPU host to be useful; it is never chosen where diffusers
does not import (the control plane's engine table says so)."""
