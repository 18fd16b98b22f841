export { cancelHotelBooking } from './cancel-hotel-booking.js';
export { refundCharge } from './refund-charge.js';
export { releaseFlightHold } from './release-flight-hold.js';
