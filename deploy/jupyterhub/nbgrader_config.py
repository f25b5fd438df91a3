# nbgrader, for every user of the hub: install as /etc/jupyter/nbgrader_config.py.
# Students need only the course id and the exchange; the instructor's course folder has its
# own configuration (course_nbgrader_config.py) on top of this one.
c = get_config()  # noqa: F821 (given by nbgrader when it reads this file)

c.CourseDirectory.course_id = "autograd_lab"

# The exchange: one folder every user can reach. release_assignment writes outbound/, students'
# submit writes inbound/ (each submission owned by its student), release_feedback writes
# feedback/. Create it once as root:  mkdir -p /srv/nbgrader/exchange && chmod 777 /srv/nbgrader/exchange
c.Exchange.root = "/srv/nbgrader/exchange"
