from datetime import datetime

from pydantic import BaseModel, ConfigDict


class BookingIn(BaseModel):
    resource_id: int
    starts_at: datetime
    ends_at: datetime


class BookingOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int
    resource_id: int
    actor_id: int
    starts_at: datetime
    ends_at: datetime
    status: str
