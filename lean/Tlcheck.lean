import Tlcheck.Spec
import Tlcheck.Adjoint
import Tlcheck.Check
import Tlcheck.Certs.All
