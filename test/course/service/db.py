import os

from sqlalchemy import create_engine
from sqlalchemy.orm import sessionmaker

engine = create_engine(os.environ["DATABASE_URL"], isolation_level="READ COMMITTED")
SessionFactory = sessionmaker(engine)
