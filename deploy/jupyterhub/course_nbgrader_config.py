# nbgrader, for the instructor's course folder: copy as ~/autograd_lab/nbgrader_config.py
# of the instructor and run every nbgrader and `autograd-lab grade` command from that folder.
#
#   ~/autograd_lab/source/ASSIGNMENT/*.ipynb              autograd-lab nbgrader-source --to source
#   ~/autograd_lab/release/ASSIGNMENT/*.ipynb             nbgrader generate_assignment ASSIGNMENT
#   ~/autograd_lab/submitted/STUDENT/ASSIGNMENT/*.ipynb   nbgrader collect ASSIGNMENT
#   ~/autograd_lab/feedback/STUDENT/ASSIGNMENT/*.html     autograd-lab grade --nbgrader-assignment
import os

c = get_config()  # noqa: F821 (given by nbgrader when it reads this file)

c.CourseDirectory.course_id = "autograd_lab"
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.Exchange.root = "/srv/nbgrader/exchange"

