# nbgrader, for every user of the hub: install as /etc/jupyter/nbgrader_config.py.
# Students need only the course id and the exchange; the instructor's course folder has its
# own configuration (course_nbgrader_config.py) on top of this one.
c = get_config()  # noqa: F821 (given by nbgrader when it reads this file)

c.CourseDirectory.course_id = "autograd_lab"

# The exchange: one folder every user can reach. release_assignment writes outbound/, students'
# submit writes inbound/ (each submission owned by its student), collect reads inbound/,
# release_feedback writes feedback/. It is NOT world-writable: root sets it up once, with the
# instructor's Unix user name, and the classes below keep it so (see deploy/jupyterhub/README.md):
#   python3 -m autograd_lab.course.grading.exchange setup --root /srv/nbgrader/exchange \
#       --course autograd_lab --instructor instructor
c.Exchange.root = "/srv/nbgrader/exchange"

# nbgrader's exchange with two changes (autograd_lab/course/grading/exchange.py): the commands accept a
# root that only root may write, the instructor's commands refuse a layout others could change,
# and collect takes an inbound folder only from the user who owns it, copying no link, FIFO,
# device or hard link (each refused submission is logged with its reason).
_EXCHANGE = "autograd_lab.course.grading.exchange."
c.ExchangeFactory.release_assignment = _EXCHANGE + "ExchangeReleaseAssignment"
c.ExchangeFactory.release_feedback = _EXCHANGE + "ExchangeReleaseFeedback"
c.ExchangeFactory.fetch_assignment = _EXCHANGE + "ExchangeFetchAssignment"
c.ExchangeFactory.fetch_feedback = _EXCHANGE + "ExchangeFetchFeedback"
c.ExchangeFactory.submit = _EXCHANGE + "ExchangeSubmit"
c.ExchangeFactory.list = _EXCHANGE + "ExchangeList"
c.ExchangeFactory.collect = _EXCHANGE + "ExchangeCollect"
