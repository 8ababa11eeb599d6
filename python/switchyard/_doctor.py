"""switchyard.doctor(): why each execution provider can or cannot run here."""

import collections

from . import _switchyard as _C

DoctorCheck = collections.namedtuple("DoctorCheck", ["what", "ok", "detail"])
DoctorCheck.__doc__ = "One thing doctor looked at: a library, the driver, a setting."


class ProviderDiagnosis:
    """One provider: built into this installation, loadable here (its
    libraries and driver load), device present, and so usable; if not,
    ``reason`` says why and ``fix`` what to do."""

    __slots__ = ("name", "short_name", "built", "loadable", "device_present", "usable", "reason", "fix",
                 "checks", "devices", "environment")

    def __init__(self, fields):
        for key in self.__slots__:
            setattr(self, key, fields[key])
        self.checks = [DoctorCheck(*c) for c in self.checks]

    def __repr__(self):
        state = "usable" if self.usable else f"not usable: {self.reason}"
        return f"ProviderDiagnosis({self.name!r}, {state})"


class DoctorReport(list):
    """A list of ProviderDiagnosis, in default priority order; str() is the
    text `switchyard doctor` prints."""

    def __init__(self, providers, text):
        super().__init__(providers)
        self._text = text

    def __str__(self):
        return self._text

    def usable(self):
        """Long names of the providers that can run here."""
        return [p.name for p in self if p.usable]


def doctor():
    """Diagnoses every provider Switchyard knows: ``print(switchyard.doctor())``."""
    providers, text = _C._doctor()
    return DoctorReport([ProviderDiagnosis(p) for p in providers], text)
