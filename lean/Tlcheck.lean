import Tlcheck.Spec
import Tlcheck.Adjoint
import Tlcheck.Check
import Tlcheck.Deriv
import Tlcheck.Taylor
import Tlcheck.Graph
import Tlcheck.Comp
import Tlcheck.Certs.All
