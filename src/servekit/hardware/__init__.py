"""Hardware as one typed profile per taxonomy entry.

- ``profile``: the frozen ``HardwareProfile`` and the derivation of every fact a taxonomy entry
  may leave out (kind, platform, compute target, interconnect, per-device memory, SoC layout);
- ``precision``: which number formats a device runs natively, and the rules that follow;
- ``container``: the ``docker run`` device flags of each platform;
- ``device_plugins``: the Kubernetes device-plugin resource (and TPU node labels) of each platform;
- ``device_memory``: the one device table: the memory the engine sees per GPU model, from logs;
- ``lookup``: profiles built once per taxonomy, and the profile behind one taxonomy entry.
"""

from servekit.hardware.container import ContainerDevices
from servekit.hardware.device_memory import DEVICE_MEMORY, DeviceMemory, assumed_gib, measured_memory, nominal_gb_of
from servekit.hardware.lookup import LOCAL, build_profiles, profile_of, profiles_for
from servekit.hardware.precision import PrecisionGap, precision_gap, variant_precision_supported
from servekit.hardware.profile import HardwareProfile, SocLayout, build_profile, custom_profile

__all__ = [
    "DEVICE_MEMORY",
    "LOCAL",
    "ContainerDevices",
    "DeviceMemory",
    "HardwareProfile",
    "PrecisionGap",
    "SocLayout",
    "assumed_gib",
    "build_profile",
    "build_profiles",
    "custom_profile",
    "measured_memory",
    "nominal_gb_of",
    "precision_gap",
    "profile_of",
    "profiles_for",
    "variant_precision_supported",
]
